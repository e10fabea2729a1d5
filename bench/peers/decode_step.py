#!/usr/bin/env python3
"""PyTorch's time for bench/llm_decode.sh's decode step: LAYERS layers of
x += W2 . tanh(W1 . x) (weights [out, in]), one token, on THREADS threads,
no_grad. Two forms a user would write are timed and the faster counts:
torch.nn.functional.linear on a [1, K] row, and torch.mv on the token's
vector (PyTorch 1.13's f32 mv is about 4x its f32 linear here; its bf16 mv
far slower than its bf16 linear). Prints the median seconds of RUNS steps
after WARMUP, or "-" when this PyTorch has neither on the CPU.
Usage: decode_step.py TYPE LAYERS K F THREADS RUNS WARMUP"""
import sys
import time

import torch


def main():
    name, layers, k, f, threads, runs, warmup = sys.argv[1], *map(int, sys.argv[2:8])
    torch.set_num_threads(threads)
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[name]
    g = torch.Generator().manual_seed(0)
    w1 = [(torch.rand(f, k, generator=g) * 0.02).to(dtype) for _ in range(layers)]
    w2 = [(torch.rand(k, f, generator=g) * 0.02).to(dtype) for _ in range(layers)]
    x0 = torch.rand(1, k, generator=g).to(dtype)

    def linear_step():
        x = x0
        for a, b in zip(w1, w2):
            x = x + torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(x, a)), b)
        return x

    def mv_step():
        x = x0[0]
        for a, b in zip(w1, w2):
            x = x + torch.mv(b, torch.tanh(torch.mv(a, x)))
        return x

    best = None
    for step in (linear_step, mv_step):
        try:
            with torch.no_grad():
                step()
        except RuntimeError:
            continue
        times = []
        with torch.no_grad():
            for i in range(warmup + runs):
                t0 = time.perf_counter()
                step()
                if i >= warmup:
                    times.append(time.perf_counter() - t0)
        times.sort()
        median = times[len(times) // 2]
        best = median if best is None else min(best, median)
    print("-" if best is None else f"{best:.6f}")


if __name__ == "__main__":
    main()
