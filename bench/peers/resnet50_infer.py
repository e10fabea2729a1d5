#!/usr/bin/python3
"""PyTorch's own latency for resnet50 inference at batch 1: the peer of
../shared/hlo/xla__backends_cpu_benchmarks_hlo_resnet50_keras_jax_f32.hlo
that bench/models.sh runs beside neuron-exec.

That module is Keras' ResNet50 traced by JAX (NHWC activations, HWIO
kernels, batch norm folded into scale and shift, f32). The peer is
torchvision's resnet50 (weights=None) in eval() mode under no_grad on one
random f32[1,3,224,224] image: the same convolutions, pooling and dense
layer, in PyTorch's own (NCHW) layout on its bundled oneDNN.

By default the model is frozen for inference the way PyTorch offers it on a
CPU (torch.jit.trace + torch.jit.optimize_for_inference: batch norm folded
into the convolutions, oneDNN weights prepacked once), the fastest of the
builds tried here (eager NCHW 120 ms, eager channels-last 109 ms, frozen
78 ms on 2 threads); --eager runs the plain module instead.

Runs --warmup untimed calls, then --iterations timed ones on --threads
intra-op threads (default 2), and prints one line of JSON:
  {"p50_seconds": median, "min_seconds": fastest, "iterations": n,
   "peak_rss_bytes": this process's peak RSS, "threads": t, "torch": version}
Needs Debian's python3-torch and python3-torchvision (/usr/bin/python3).
Usage: bench/peers/resnet50_infer.py [--iterations N] [--warmup W] [--threads T]
"""
import argparse
import json
import resource
import statistics
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=20, help="timed calls (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1, the module's)")
    ap.add_argument("--eager", action="store_true", help="the plain eager module, not frozen")
    args = ap.parse_args()
    if args.iterations < 1 or args.warmup < 0:
        ap.error("--iterations must be at least 1 and --warmup at least 0")

    import torch
    import torchvision

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = torchvision.models.resnet50(weights=None).eval()
    image = torch.randn(args.batch, 3, 224, 224)
    times = []
    with torch.no_grad():
        if not args.eager:
            model = torch.jit.optimize_for_inference(torch.jit.trace(model, image))
        for _ in range(args.warmup):
            model(image)
        for _ in range(args.iterations):
            start = time.perf_counter()
            model(image)
            times.append(time.perf_counter() - start)
    print(json.dumps({
        "p50_seconds": statistics.median(times),
        "min_seconds": min(times),
        "iterations": len(times),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "threads": args.threads,
        "mode": "eager" if args.eager else "frozen",
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
