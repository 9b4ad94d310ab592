"""gpusage-trace: turn any PyTorch model into a workload that `gpusage plan --workload FILE` prices.

It runs the model's forward pass once per batch size on the meta device (no memory, no GPU, no weights
computed), falling back to the CPU when an op has no meta kernel, and records per layer what gpusage's
step-time and memory models need: parameters (trainable or frozen), forward and backward FLOPs, elements
read and written, the tensors autograd keeps for backward (torch.autograd.graph.saved_tensors_hooks) with
their dtypes, and the op class. It traces at batch 2 and batch 3 and keeps the difference: what grows with
the batch, per sample, apart from what does not (batch norm's statistics, broadcast masks).

Examples:
  gpusage-trace torchvision:resnet50 --input 3x224 -o resnet50.json
  gpusage-trace mymodels.py:build_unet --input 1x256x256 -o unet.json
  gpusage-trace mypackage.models:make_model --input 128:int64:32000 --loss sum -o lm.json
  gpusage plan --workload resnet50.json --gpu rtx5090 --batch 64
"""

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys
import tempfile

FORMAT = "gpusage-workload"
VERSION = 1
DTYPES = {"float32": "float32", "float": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16", "int64": "int64", "long": "int64", "int32": "int32",
          "bool": "bool"}
LOSSES = ("sum", "cross_entropy")


class TraceError(Exception):
    """A user mistake: the message is one line naming the bad value and what is accepted (exit 2)."""


class InputSpec:
    """One model input, per sample: "3x224" (3x224x224), "3x32x32:float32", "128:int64:32000" (token ids
    below 32000)."""

    def __init__(self, text):
        parts = text.split(":")
        try:
            dims = [int(d) for d in parts[0].lower().split("x")]
        except ValueError:
            raise TraceError(f"--input '{text}': the shape must be sizes joined by x, e.g. 3x224 or 3x224x224 "
                             "or 128:int64:32000") from None
        if not dims or any(d < 1 or d > 1 << 20 for d in dims):
            raise TraceError(f"--input '{text}': each size must be from 1 to 1048576")
        if len(dims) == 2 and len(parts) == 1:
            dims = [dims[0], dims[1], dims[1]]  # 3x224: a square image (give a dtype to mean a 2-D input)
        self.shape = dims
        self.dtype = DTYPES.get(parts[1].lower(), None) if len(parts) > 1 else "float32"
        if self.dtype is None:
            raise TraceError(f"--input '{text}': dtype '{parts[1]}' is not one of {', '.join(sorted(set(DTYPES)))}")
        self.high = 2
        if len(parts) > 2:
            try:
                self.high = int(parts[2])
            except ValueError:
                raise TraceError(f"--input '{text}': the index bound '{parts[2]}' is not a whole number") from None

    def make(self, torch, batch, device):
        dtype = getattr(torch, self.dtype)
        if device == "meta":
            return torch.empty([batch] + self.shape, dtype=dtype, device=device)
        if dtype.is_floating_point:  # values on the CPU: code that reads them must see numbers, not garbage
            return torch.randn([batch] + self.shape, device=device).to(dtype)
        return torch.randint(0, max(1, self.high), [batch] + self.shape, dtype=dtype, device=device)


def load_model(spec):
    """torchvision:NAME, timm:NAME, module:function, or path/to/file.py[:function]: an nn.Module."""
    import torch

    if spec.startswith("torchvision:"):
        try:
            import torchvision.models as models
        except ImportError:
            raise TraceError(f"model '{spec}': torchvision is not installed") from None
        name = spec.split(":", 1)[1]
        builder = getattr(models, name, None)
        if builder is None or not callable(builder):
            raise TraceError(f"model '{spec}': torchvision.models has no '{name}' (e.g. resnet50, convnext_tiny)")
        return builder(), name
    if spec.startswith("timm:"):
        try:
            import timm
        except ImportError:
            raise TraceError(f"model '{spec}': timm is not installed") from None
        name = spec.split(":", 1)[1]
        return timm.create_model(name, pretrained=False), name
    path, _, function = spec.partition(":")
    if path.endswith(".py"):
        if not os.path.isfile(path):
            raise TraceError(f"model '{spec}': file '{path}' does not exist")
        module_spec = importlib.util.spec_from_file_location("gpusage_traced_model", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        function = function or next((f for f in ("model", "build_model", "Model") if hasattr(module, f)), "")
        label = os.path.splitext(os.path.basename(path))[0]
    else:
        if not function:
            raise TraceError(f"model '{spec}': give torchvision:NAME, timm:NAME, module:function or FILE.py[:function]")
        try:
            module = importlib.import_module(path)
        except ImportError as e:
            raise TraceError(f"model '{spec}': cannot import '{path}': {e}") from None
        label = function
    make = getattr(module, function, None) if function else None
    if make is None:
        raise TraceError(f"model '{spec}': '{function or 'model'}' is not defined there (give FILE.py:function)")
    model = make() if callable(make) and not isinstance(make, torch.nn.Module) else make
    if not isinstance(model, torch.nn.Module):
        raise TraceError(f"model '{spec}': '{function}' returned {type(model).__name__}, not a torch.nn.Module")
    return model, label


def _outputs(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _outputs(o)]
    return [t for t in vars(out).values() if isinstance(t, torch.Tensor)] if hasattr(out, "__dict__") else []


def _loss(torch, out, loss):
    tensors = [t for t in _outputs(out) if t.is_floating_point() and t.requires_grad]
    if not tensors:
        raise TraceError("the model's output holds no floating-point tensor that needs a gradient: nothing to train")
    if loss == "cross_entropy":
        logits = tensors[0]
        if logits.dim() == 3:  # batch x sequence x vocabulary: one prediction per token
            logits = logits.reshape(-1, logits.shape[-1])
        # Classes on dim 1 otherwise: batch x classes, or batch x classes x H x W (segmentation).
        target = torch.zeros(logits.shape[:1] + logits.shape[2:], dtype=torch.int64, device=logits.device)
        return torch.nn.functional.cross_entropy(logits, target)
    if callable(loss):
        return loss(out)
    return sum(t.sum() for t in tensors)


def _custom_functions(root):
    """Names of the custom autograd Functions in the graph behind `root` (their backward is user code)."""
    seen, names, stack = set(), {}, [root.grad_fn] if root.grad_fn is not None else []
    alive = []  # the Python objects of C++ nodes are made on access: keep them, or their ids are reused
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        alive.append(fn)
        if hasattr(fn, "_forward_cls"):
            names[fn._forward_cls.__name__] = names.get(fn._forward_cls.__name__, 0) + 1
        stack.extend(f for f, _ in getattr(fn, "next_functions", ()))
    return names


def _trace_once(model, make_inputs, batch, device, loss, flash_attention):
    import torch
    from ._recorder import recording

    inputs = make_inputs(batch, device)
    inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    with recording(model, flash_attention) as rec:
        out = model(*inputs)
        rec.in_loss = True
        total = _loss(torch, out, loss)
    rec.finish_saved()
    rec.custom_functions = _custom_functions(total)
    rec.model_inputs = inputs
    return rec


def _per_sample_shape(shape2, shape3):
    """The output shape without its batch dimension: the one that is 2 at batch 2 and 3 at batch 3."""
    if len(shape2) == len(shape3):
        for i, (a, b) in enumerate(zip(shape2, shape3)):
            if a == 2 and b == 3 and all(x == y for j, (x, y) in enumerate(zip(shape2, shape3)) if j != i):
                return [int(d) for d in shape2[:i] + shape2[i + 1:]] or [1]
    n2, n3 = math.prod(shape2), math.prod(shape3)
    return [int(n3 - n2)] if n3 > n2 else []


def _layer_records(rec2, rec3):
    names2 = [l.name for l in rec2.layers]
    if names2 != [l.name for l in rec3.layers]:
        raise TraceError("the model runs different layers at batch 2 and batch 3 (data-dependent control flow); "
                         "gpusage-trace needs one graph for every batch size")
    layers = []
    for a, b in zip(rec2.layers, rec3.layers):
        if a.absorbed:
            continue

        def per_sample(field):
            return max(0.0, float(getattr(b, field) - getattr(a, field)))
        record = {
            "name": a.name,
            "op": a.op,
            "output_shape": _per_sample_shape(a.output_shape, b.output_shape),
            "params": int(a.params),
            "forward_flops": per_sample("forward_flops"),
            "backward_flops": per_sample("backward_flops"),
            "forward_io_elements": per_sample("io"),
            "saved_elements": per_sample("saved"),
            "saved_fixed_bytes": per_sample("saved_fixed"),
            "autocast_extra_saved_bytes": per_sample("autocast_extra"),
            "input_elements": max(0.0, b.input_elements() - a.input_elements()),
            "segment": a.segment,
        }
        scores = per_sample("scores")
        if scores > 0:
            record["score_elements"] = scores
        if a.frozen_params:
            record["frozen_params"] = int(a.frozen_params)
        if a.lora:
            record["lora_targets"] = [{"in": i, "out": o, "attention": att} for i, o, att in a.lora.values()]
        if not record["output_shape"]:
            del record["output_shape"]
        layers.append(record)
    trainable, frozen = rec2.unused_params()
    if trainable or frozen:
        layers.append({"name": "unused_parameters", "op": "elementwise", "params": int(trainable),
                       "frozen_params": int(frozen), "segment": -1})
    return layers


def _input_maker(example_inputs, input_specs):
    if callable(example_inputs):
        return example_inputs
    specs = list(input_specs or [])
    if example_inputs is not None:
        tensors = example_inputs if isinstance(example_inputs, (list, tuple)) else [example_inputs]
        for t in tensors:
            spec = InputSpec("x".join(str(d) for d in t.shape[1:]) or "1")
            spec.shape, spec.dtype = [int(d) for d in t.shape[1:]], str(t.dtype).replace("torch.", "")
            specs.append(spec)
    if not specs:
        raise TraceError("no example input: give --input SHAPE (e.g. 3x224) or example_inputs")
    import torch

    return lambda batch, device: [s.make(torch, batch, device) for s in specs]


def trace(model, example_inputs=None, *, input_specs=None, loss="sum", name=None, flash_attention=True,
          source=None, copy_model=True):
    """Traces `model` (an nn.Module) and returns the workload as a dict (the JSON gpusage-trace writes).

    example_inputs: a tensor or tuple of tensors with a batch dimension (only their shapes and dtypes are
    used), a function (batch, device) -> inputs, or an input spec string as gpusage-trace --input takes it
    ("3x224", "128:int64:32000"; the same as input_specs=["3x224"]). loss: "sum" of the outputs (default), "cross_entropy"
    on the first output against class 0, or a function of the output. The model itself is left as it is
    (a copy is traced) unless copy_model is False.
    """
    import copy

    import torch

    if isinstance(example_inputs, str):  # "3x224": an input spec, as gpusage-trace --input takes it
        example_inputs, input_specs = None, [example_inputs, *(input_specs or [])]
    if not isinstance(model, torch.nn.Module):
        raise TraceError(f"trace() takes a torch.nn.Module, not {type(model).__name__}")
    make_inputs = _input_maker(example_inputs, [InputSpec(s) if isinstance(s, str) else s for s in input_specs or []])
    notes = []
    device = "meta"
    traced = copy.deepcopy(model) if copy_model else model
    try:
        traced.to(device).train()
        rec2 = _trace_once(traced, make_inputs, 2, device, loss, flash_attention)
        rec3 = _trace_once(traced, make_inputs, 3, device, loss, flash_attention)
    except (NotImplementedError, RuntimeError) as e:
        # An op without a meta kernel (or code that reads values): trace on the CPU instead.
        device = "cpu"
        notes.append(f"traced on the CPU: the meta device failed ({str(e).splitlines()[0][:120]})")
        traced = traced.to_empty(device=device).train()  # the meta copy, with storage again
        torch.manual_seed(0)
        for module in traced.modules():  # ... and with values: code that reads them must take one path
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
        rec2 = _trace_once(traced, make_inputs, 2, device, loss, flash_attention)
        rec3 = _trace_once(traced, make_inputs, 3, device, loss, flash_attention)
    for fn, calls in sorted(rec2.custom_functions.items()):
        notes.append(f"custom autograd Function {fn} ({calls} call{'s' if calls > 1 else ''}): its forward ops are "
                     "counted; its backward is user code, priced as its forward")
    first = rec2.model_inputs[0]
    language = not first.is_floating_point()
    workload = {
        "format": FORMAT,
        "version": VERSION,
        # The model's own name: plan's intervals then come from its family's validation runs when it has any.
        "id": name or type(model).__name__,
        "display_name": f"{name or type(model).__name__} (traced)",
        "domain": "language" if language else "vision",
        "resolution": 0 if language else int(first.shape[-1]),
        "seq_len": int(first.shape[1]) if language and first.dim() > 1 else 0,
        "source": f"traced by gpusage-trace from {source or type(model).__name__} with PyTorch {torch.__version__} "
                  f"on the {device} device",
        "layers": _layer_records(rec2, rec3),
    }
    if notes:
        workload["notes"] = notes
    return workload


# The fields of a layer and their types: what src/core/workload/traced.cpp reads (docs/MODEL.md, "The file").
LAYER_NUMBERS = ("forward_flops", "backward_flops", "forward_io_elements", "saved_elements", "saved_fixed_bytes",
                 "autocast_extra_saved_bytes", "input_elements", "score_elements")
LAYER_WHOLE = ("params", "frozen_params", "segment")


def check_workload(workload):
    """The schema of the workload JSON, checked before it is written: a wrong field here is a tracer bug."""
    problems = []
    if workload.get("format") != FORMAT or workload.get("version") != VERSION:
        problems.append(f"format/version {workload.get('format')!r}/{workload.get('version')!r}")
    if workload.get("domain") not in ("vision", "language") or not isinstance(workload.get("id"), str):
        problems.append("domain or id")
    layers = workload.get("layers")
    if not isinstance(layers, list) or not layers:
        problems.append("no layers")
    for i, layer in enumerate(layers or []):
        if not isinstance(layer.get("name"), str) or not isinstance(layer.get("op"), str):
            problems.append(f"layers[{i}] name/op")
        for key in LAYER_NUMBERS:
            value = layer.get(key, 0)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                problems.append(f"layers[{i}].{key} = {value!r}")
        for key in LAYER_WHOLE:
            value = layer.get(key, 0)
            if not isinstance(value, int) or value < (-1 if key == "segment" else 0):
                problems.append(f"layers[{i}].{key} = {value!r}")
        if any(not isinstance(d, int) or d < 1 for d in layer.get("output_shape", [])):
            problems.append(f"layers[{i}].output_shape = {layer.get('output_shape')!r}")
    if problems:
        raise RuntimeError("gpusage-trace made an invalid workload (a bug; please report it): " + "; ".join(problems[:5]))


def write_workload(workload, path):
    """Writes the JSON through a temporary file in the same directory, then renames: never a partial file."""
    check_workload(workload)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".gpusage-trace-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(workload, f, indent=1)
            f.write("\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes it 0600; a file one writes is 0644 under the usual umask
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="gpusage-trace", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("model", help="torchvision:NAME, timm:NAME, package.module:function, or FILE.py[:function] "
                                      "(a function returning an nn.Module)")
    parser.add_argument("--input", action="append", default=[], metavar="SHAPE[:DTYPE[:HIGH]]",
                        help="one model input per sample, repeat for several: 3x224 (a 3x224x224 image), "
                             "3x32x64:float32, 128:int64:32000 (128 token ids below 32000)")
    parser.add_argument("--inputs", metavar="module:function",
                        help="a function (batch, device) returning the model's inputs, instead of --input")
    parser.add_argument("--loss", default="sum", help="sum (default: the sum of the outputs) | cross_entropy "
                                                      "(the first output as logits)")
    parser.add_argument("--eager-attention", action="store_true",
                        help="keep what an unfused softmax(QK^T)V saves (the s^2 scores), instead of what a flash "
                             "kernel saves (PyTorch 2's scaled_dot_product_attention on a GPU)")
    parser.add_argument("--name", help="the model's name in plan's output (default: from MODEL)")
    parser.add_argument("-o", "--out", help="the workload JSON to write (default: NAME.json)")
    args = parser.parse_args(argv)
    try:
        if args.loss not in LOSSES:
            raise TraceError(f"--loss '{args.loss}' is not one of {', '.join(LOSSES)}")
        try:
            import torch  # noqa: F401
        except ImportError:
            raise TraceError("PyTorch is not installed in this Python: gpusage-trace needs torch") from None
        model, label = load_model(args.model)
        inputs = None
        if args.inputs:
            module, _, function = args.inputs.partition(":")
            try:
                inputs = getattr(importlib.import_module(module), function)
            except (ImportError, AttributeError) as e:
                raise TraceError(f"--inputs '{args.inputs}': {e}") from None
        elif not args.input:
            raise TraceError("give --input SHAPE (e.g. --input 3x224 for an ImageNet image) or --inputs module:function")
        name = args.name or label
        workload = trace(model, inputs, input_specs=args.input, loss=args.loss, name=name,
                         flash_attention=not args.eager_attention, source=args.model, copy_model=False)
        out = args.out or f"{name}.json"
        write_workload(workload, out)
    except TraceError as e:
        print(f"gpusage-trace: {e}", file=sys.stderr)
        return 2
    layers = workload["layers"]
    params = sum(l.get("params", 0) for l in layers)
    gflops = sum(l.get("forward_flops", 0) for l in layers) / 1e9
    print(f"Wrote {out}: {len(layers)} layers, {params:,} parameters, {gflops:.3f} forward GFLOPs per sample. "
          f"Plan it: gpusage plan --workload {out} --gpu rtx5090")
    for note in workload.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
