#!/usr/bin/env python3
"""Where a training step's GPU time goes, kernel by kernel (issue 28): plan has the GeForce cards' ResNet-50
memory-bound and too slow, and only a profile says how much time batch norm, the elementwise ops and the
NCHW <-> NHWC transposes really take beside the convolutions. scripts/device-check.sh runs it on the device
for ResNet-50 in NCHW and channels_last; its dry run runs it on the CPU (where the operators stand in for
the kernels).

  kernel_profile.py --configs NAME[,NAME...] --device cuda|cpu --steps N --out FILE.json

NAME is a train_probe.py configuration (train_probe.py --list prints them). For each, after warm-up steps,
N steps run under torch.profiler; the output holds the step time, every kernel (or CPU operator) with its
calls and time, and the time by class (classes below, first match wins) with its share of the kernels' time.
"""
import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_probe  # noqa: E402  (the same models, batches and precision flags as the probe)

# Kernel classes by name, first match wins. cuDNN and cuBLAS name their kernels after the algorithm
# (implicit_gemm, xmma, cutlass, sm80_*), the layout conversions nchwToNhwc / nhwcToNchw; PyTorch's own
# kernels name their functor (batch_norm_*, elementwise_kernel with the op, reduce_kernel, multi_tensor_apply).
CLASSES = [
    ("layout", r"nchwtonhwc|nhwctonchw|transpose|permute|copy_kernel|contiguous"),
    ("batch_norm", r"batch_?norm|bn_fw|bn_bw|welford|native_batch_norm"),
    ("conv_gemm", r"conv|gemm|xmma|cutlass|implicit|wgrad|dgrad|fprop|matmul|addmm|mm_|linear|cublas|cudnn"),
    ("optimizer", r"multi_tensor|foreach|_fused_adam|sgd|adam"),
    ("reduce", r"reduce|sum|mean|softmax|nll|cross_entropy|log_softmax"),
    ("elementwise", r"elementwise|relu|threshold|add|mul|div|fill|max_pool|avg_pool|pool|where|clamp|copy"),
]


def kernel_class(name: str) -> str:
    low = name.lower()
    for cls, pattern in CLASSES:
        if re.search(pattern, low):
            return cls
    return "other"


def profile(name: str, device_name: str, steps: int, warmup: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity
    c = train_probe.all_configs()[name]
    device = torch.device(device_name)
    cuda = device.type == "cuda"
    if cuda:
        train_probe.set_precision_flags(c, torch)
    t = train_probe.Trainer(c, torch, device)
    for _ in range(warmup):
        t.step()
    t.sync()
    activities = [ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    start = time.perf_counter()
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            t.step()
        t.sync()
    wall_s = (time.perf_counter() - start) / steps
    kernels = []
    for e in prof.key_averages():
        # CUDA: the kernels' own device time; CPU: each operator's self time (no double counting of children).
        # (self_device_time_total since PyTorch 2.4; self_cuda_time_total before it.)
        us = (getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)) if cuda \
            else e.self_cpu_time_total
        if us > 0 and (not cuda or e.device_type == torch.autograd.DeviceType.CUDA):
            kernels.append({"name": e.key[:200], "calls": e.count // steps, "ms_per_step": us / 1000 / steps,
                            "class": kernel_class(e.key)})
    kernels.sort(key=lambda k: -k["ms_per_step"])
    total = sum(k["ms_per_step"] for k in kernels)
    classes = {}
    for k in kernels:
        cls = classes.setdefault(k["class"], {"ms_per_step": 0.0, "kernels": 0})
        cls["ms_per_step"] += k["ms_per_step"]
        cls["kernels"] += k["calls"]
    for cls in classes.values():
        cls["share"] = cls["ms_per_step"] / total if total else 0.0
    return {"config": name, "settings": train_probe.asdict(c), "device": device_name, "steps": steps,
            "warmup": warmup, "wall_ms_per_step": wall_s * 1000, "kernel_ms_per_step": total,
            "classes": classes, "kernels": kernels[:60]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", required=True, help="train_probe.py configuration names, comma separated")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=None, help="default: 8 on CUDA (cudnn.benchmark's search), 1 on CPU")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    known = train_probe.all_configs()
    names = [n for n in a.configs.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown or not names or a.steps < 1:
        print(f"kernel_profile: unknown configuration {unknown or a.configs!r} or --steps {a.steps} below 1 "
              f"(configurations: train_probe.py --list)", file=sys.stderr)
        return 2
    warmup = a.warmup if a.warmup is not None else (8 if a.device == "cuda" else 1)
    results = []
    for name in names:
        try:
            results.append(profile(name, a.device, a.steps, warmup))
        except Exception as e:  # one failed configuration is recorded, the others still run
            results.append({"config": name, "error": f"{type(e).__name__}: {e}"[:500]})
        r = results[-1]
        print(r["config"], r.get("error") or {k: round(v["share"], 3) for k, v in r["classes"].items()}, flush=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"profiles": results}, f, indent=1)
    os.replace(tmp, a.out)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
