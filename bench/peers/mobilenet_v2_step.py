#!/usr/bin/python3
"""PyTorch's own time and memory for one mobilenet_v2 training step: the peer
of ../shared/hlo/xla__tools_data_benchmarking_mobilenet_v2.hlo that
bench/model_memory.sh runs beside neuron-exec.

That module is a torch_xla trace of torchvision's mobilenet_v2 in training
mode: its entry parameters are the images (p5, f32[96,3,224,224]), the
convolution and batch-norm parameters and running statistics, and the
classifier (p318, f32[1000,1280]: 1000 classes); its results are the
updated running statistics and the gradients. The same here: torchvision's
mobilenet_v2 (weights=None, 1000 classes) in train() mode on random images of
that shape, cross-entropy against random labels, backward, and an SGD step
with momentum 0.9 (the trace takes no labels and leaves the weight update to
a separate graph; the loss and the update are a small part of a step).

Runs one warm-up step and then --steps measured ones on --threads intra-op
threads (default 2), and prints one line of JSON:
  {"step_seconds": median of the measured steps, "steps": n,
   "peak_rss_bytes": this process's peak RSS, "threads": t, "torch": version}
Needs Debian's python3-torch and python3-torchvision (/usr/bin/python3).
Usage: bench/peers/mobilenet_v2_step.py [--steps N] [--threads T]
"""
import argparse
import json
import resource
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3, help="measured steps (default 3), after one warm-up")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    ap.add_argument("--batch", type=int, default=96, help="batch size (default 96, the module's)")
    ap.add_argument("--image-size", type=int, default=224, help="image height and width (default 224)")
    ap.add_argument("--classes", type=int, default=1000, help="classes (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--channels-last", action="store_true",
                    help="model and images in channels-last memory format (oneDNN's preferred layout)")
    args = ap.parse_args()
    if args.steps < 1:
        ap.error("--steps must be at least 1")

    import torch
    import torchvision

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = torchvision.models.mobilenet_v2(weights=None, num_classes=args.classes)
    model.train()
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, args.image_size, args.image_size)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, args.classes, (args.batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        return loss

    times = []
    for i in range(1 + args.steps):
        start = time.perf_counter()
        loss = step()
        elapsed = time.perf_counter() - start
        if not torch.isfinite(loss):
            sys.exit("mobilenet_v2_step.py: the loss is not finite")
        if i > 0:  # the first step is the warm-up
            times.append(elapsed)

    print(json.dumps({
        "step_seconds": statistics.median(times),
        "steps": len(times),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "channels_last": args.channels_last,
    }))


if __name__ == "__main__":
    main()
