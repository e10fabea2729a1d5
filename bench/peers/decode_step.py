#!/usr/bin/env python3
"""PyTorch's time for bench/llm_decode.sh's decode step: LAYERS layers of
x += W2 . tanh(W1 . x) with torch.nn.functional.linear (weights [out, in]),
one token, on THREADS threads, no_grad; prints the median seconds of RUNS
steps after WARMUP, or "-" when this PyTorch has no such linear on the CPU.
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

    def step():
        x = x0
        for a, b in zip(w1, w2):
            x = x + torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(x, a)), b)
        return x

    try:
        with torch.no_grad():
            step()
    except RuntimeError:
        print("-")
        return
    times = []
    with torch.no_grad():
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            step()
            if i >= warmup:
                times.append(time.perf_counter() - t0)
    times.sort()
    print(f"{times[len(times) // 2]:.6f}")


if __name__ == "__main__":
    main()
