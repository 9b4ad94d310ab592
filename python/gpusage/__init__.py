"""gpusage from Python: plan training memory and speed for any PyTorch model, on GPUs you may not own.

    import gpusage
    workload = gpusage.trace(model, torch.empty(1, 3, 224, 224))   # or gpusage.trace(model, "3x224")
    result = gpusage.plan(workload, gpu="rtx5090", batch=64)        # plan's --format json, as a dict
    result = gpusage.plan("resnet50", gpu="rtx4090,rtx5090", batch="auto", precision="bf16")

plan() runs the gpusage binary (the one this package ships, else the one on PATH) as a subprocess: the
model of time and memory exists once, in C++.
"""

from ._binary import GpusageError, binary_path, plan
from .tracer import TraceError, trace, write_workload

__all__ = ["plan", "trace", "write_workload", "binary_path", "GpusageError", "TraceError"]
__version__ = "0.0.0"
