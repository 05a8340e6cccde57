"""What fmtcheck.torch.emulate adds to the library's work: the median time of one emulated F.linear
forward (x: N x N, W: N x N) against the same library calls made directly on numpy arrays (the
recipe's two operand casts, the tensor-core GEMM, the rounding to the activation format), and the
GEMM alone; the difference is the dispatch (the function mode, the autograd Function, the copies).

    PYTHONPATH=build/python .venv/bin/python tests/bench/torch_emulate_overhead.py [--sizes 256 512]"""
import argparse
import statistics
import time

import numpy as np
import torch

import fmtcheck.torch as ft
from fmtcheck import _core


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[256, 512])
    p.add_argument("--recipes", nargs="+", default=["bf16", "fp8-current"])
    p.add_argument("--gpu", default="hopper")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    print(f"{'recipe':<12} {'N':>5} {'emulated':>10} {'library':>10} {'GEMM':>10} {'overhead':>9}")
    for recipe in a.recipes:
        for n in a.sizes:
            x, w = torch.randn(n, n), torch.randn(n, n)
            xn, wn = x.numpy(), w.numpy()
            casts = _core.RecipeCasts(recipe, a.gpu)
            em = ft.emulate(recipe, a.gpu)

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
            t_em = median_time(emulated, a.repeats)
            t_lib = median_time(library, a.repeats)
            t_gemm = median_time(lambda: casts.gemm(qx, qw), a.repeats)
            print(f"{recipe:<12} {n:>5} {t_em * 1e3:>8.1f}ms {t_lib * 1e3:>8.1f}ms {t_gemm * 1e3:>8.1f}ms "
                  f"{(t_em - t_lib) / t_lib:>+8.1%}")


if __name__ == "__main__":
    main()
