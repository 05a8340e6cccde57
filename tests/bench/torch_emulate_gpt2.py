"""What fmtcheck.torch.emulate costs on a real model: one forward step of GPT-2 small (124M parameters:
12 layers, width 768, 12 heads; Hugging Face transformers from a config, random weights, no download;
eager attention) on `--tokens` tokens, under each recipe, against torch's own float32 forward of the
same step (inference: torch.no_grad()). Median seconds of up to `--repeats` runs (fewer where one run
passes `--budget` seconds), the ratio to torch, and the largest difference from torch's logits.
`--train`: a training step instead (the language-model loss of the tokens, forward and backward);
`--layers N`: a GPT-2 of N blocks.

    PYTHONPATH=build/python .venv/bin/python tests/bench/torch_emulate_gpt2.py [--tokens 32] [--train]"""
import argparse
import statistics
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

import fmtcheck.torch as ft

RUNS = ["fp32@hopper", "tf32@hopper", "tf32-rne@hopper", "bf16@hopper", "fp16@hopper", "fp8-current@hopper",
        "mxfp8@blackwell"]


def timed(fn, repeats, budget):
    """Median seconds of fn() over `repeats` runs, stopping early once the runs so far took `budget`."""
    times, out = [], None
    while len(times) < repeats and sum(times) < budget:
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), len(times), out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budget", type=float, default=200, help="seconds per recipe after which no run starts")
    p.add_argument("--runs", nargs="+", default=RUNS, help="recipe@gpu")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--train", action="store_true", help="a training step: forward and backward")
    a = p.parse_args()
    torch.manual_seed(0)
    config = GPT2Config(n_layer=a.layers, n_embd=768, n_head=12, attn_implementation="eager")
    model = GPT2LMHeadModel(config).eval()
    tokens = torch.randint(0, config.vocab_size, (1, a.tokens))

    def forward():
        if a.train:
            model.zero_grad()
            out = model(tokens, labels=tokens)
            out.loss.backward()
            return out.logits.detach()
        with torch.no_grad():
            return model(tokens).logits

    forward()  # torch's first call allocates and picks its kernels: not a step's cost
    base, n, reference = timed(forward, 10 * a.repeats, a.budget)
    print(f"GPT-2 ({a.layers} layers, {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters), one "
          f"{'training step' if a.train else 'forward'} of 1 x {a.tokens} tokens, {torch.get_num_threads()} threads")
    print(f"{'recipe':<12} {'gpu':<10} {'runs':>4} {'median':>10} {'x torch':>9} {'max |logit - torch|':>20}")
    print(f"{'torch fp32':<12} {'':<10} {n:>4} {base * 1e3:>8.1f}ms {1:>9.1f} {0:>20}")
    for run in a.runs:
        recipe, gpu = run.split("@")
        em = ft.emulate(recipe, gpu, model=model)

        def emulated():
            with em:
                return forward()

        t, n, logits = timed(emulated, a.repeats, a.budget)
        diff = (logits - reference).abs().max().item()
        print(f"{recipe:<12} {gpu:<10} {n:>4} {t:>9.1f}s {t / base:>9.0f} {diff:>20.3g}")
    step = "training steps" if a.train else "forwards"
    print(f"x torch: how many of torch's own float32 {step} one emulated one takes on this CPU")


if __name__ == "__main__":
    main()
