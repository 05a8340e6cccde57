"""What fmtcheck.torch.emulate adds to the library's work: the median time of one emulated F.linear
forward (x: N x N, W: N x N) against the same library calls made directly on numpy arrays (the
recipe's two operand casts, the tensor-core GEMM, the rounding to the activation format), and the
GEMM alone; the difference is the dispatch (the function mode, the autograd Function, the copies),
shown against the library's calls and against the GEMM's time (the issue's aim: under 10% of it): the
median over rounds of the emulated call's time less the library's in the same round.

    PYTHONPATH=build/python .venv/bin/python tests/bench/torch_emulate_overhead.py [--sizes 256 512]
        [--runs bf16@hopper fp8-current@hopper mxfp8@blackwell] [--repeats 5]"""
import argparse
import statistics
import time

import torch

import fmtcheck.torch as ft
from fmtcheck import _core


def round_times(fns, repeats):
    """Per function, its seconds in each of `repeats` rounds (after one round of warm-up); a round runs
    every function once, in turn, so a load that comes and goes on a shared machine touches all."""
    times = [[] for _ in fns]
    for r in range(repeats + 1):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            if r:
                ts.append(time.perf_counter() - t)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[256, 512])
    p.add_argument("--runs", nargs="+", default=["bf16@hopper", "fp8-current@hopper", "mxfp8@blackwell"],
                   help="recipe@gpu")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    print(f"{'recipe':<12} {'gpu':<10} {'N':>5} {'emulated':>10} {'library':>10} {'GEMM':>10} {'overhead':>9} "
          f"{'of GEMM':>8}")
    worst = 0.0
    for run in a.runs:
        recipe, gpu = run.split("@")
        for n in a.sizes:
            x, w = torch.randn(n, n), torch.randn(n, n)
            xn, wn = x.numpy(), w.numpy()
            casts = _core.RecipeCasts(recipe, gpu)
            em = ft.emulate(recipe, gpu)

            def emulated():
                with em:
                    torch.nn.functional.linear(x, w)
                em.step()

            def library():
                qx, qw = casts.operand("x", "forward", xn), casts.operand("w", "forward", wn)
                casts.to_activation("y", casts.gemm(qx, qw).reshape(-1))
                casts.begin_step()

            qx, qw = casts.operand("x", "forward", xn), casts.operand("w", "forward", wn)
            casts.begin_step()
            ems, libs, gemms = round_times([emulated, library, lambda: casts.gemm(qx, qw)], a.repeats)
            t_em, t_lib, t_gemm = (statistics.median(ts) for ts in (ems, libs, gemms))
            extra = statistics.median(e - lib for e, lib in zip(ems, libs))  # the same round's pair
            worst = max(worst, extra / t_gemm)
            print(f"{recipe:<12} {gpu:<10} {n:>5} {t_em * 1e3:>8.1f}ms {t_lib * 1e3:>8.1f}ms {t_gemm * 1e3:>8.1f}ms "
                  f"{extra / t_lib:>+8.1%} {extra / t_gemm:>+8.1%}")
    print(f"emulate's dispatch costs at most {worst:+.1%} of the emulated GEMM's time here (the aim: under 10%)")


if __name__ == "__main__":
    main()
