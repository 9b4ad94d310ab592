"""One forward pass of a model at one batch size, recorded op by op.

Every ATen op that runs is seen by a dispatch mode (below autograd, so composite ops arrive as the kernels
that really run), and every tensor autograd keeps for backward by torch.autograd.graph.saved_tensors_hooks.
Ops are grouped into layers: a leaf module's call is one layer (named by its module path, as the zoo names
torchvision's layers); an op outside leaf modules (a residual add in a block's forward) is a layer of its
own. The totals are at this batch size; trace.py traces twice and keeps the difference per sample.
"""

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _ops

FP32_BYTES = 4.0


class Layer:
    def __init__(self, name, op, segment):
        self.name = name
        self.op = op
        self.segment = segment
        self.params = 0
        self.frozen_params = 0
        self.forward_flops = 0.0
        self.backward_flops = 0.0
        self.io = 0.0
        self.saved = 0.0
        self.saved_fixed = 0.0
        self.autocast_extra = 0.0
        self.input_roots = {}  # root -> elements read from outside the layer
        self.output_shape = ()
        self.lora = {}  # parameter name -> (in, out, attention)
        self.matmul_flops = 0.0  # attention cores: the flops of their two matmuls only
        self.core_output = None  # attention cores: the root of their output
        self.score_rows = 0  # attention cores: query rows x heads (the flash kernel's fp32 logsumexp)
        self.scores = 0.0  # flash attention cores: heads x query-key pairs (one softmax each, step_time.cpp)
        self.absorbed = False  # a scaling folded into the attention core after it: not a layer

    def input_elements(self):
        return float(sum(self.input_roots.values()))


class Recorder(TorchDispatchMode):
    """Records a forward pass; use with `recording(model, ...)`."""

    def __init__(self, model, flash_attention):
        super().__init__()
        self.flash = flash_attention
        self.names = {m: n for n, m in model.named_modules()}
        self.param_names = {}
        self.param_roots = {}
        for name, p in model.named_parameters():
            self.param_roots[p._cdata] = p
            self.param_names[p._cdata] = name
        self.buffer_roots = {b._cdata for b in model.buffers()}
        self.blocks = self._find_blocks(model)
        self.stack = []
        self.layers = []
        self.by_key = {}
        self.calls = {}
        self.root = {}  # tensor _cdata -> root _cdata (views and in-place results share their input's root)
        self.producer = {}  # root -> layer index
        self.numel = {}  # root -> elements
        self.fp32_stats = set()  # roots of normalisation statistics (fp32 whatever the precision)
        self.keep = []  # every tensor seen, so that no _cdata is reused while tracing
        self.used_params = set()
        self.saved_roots = {}  # root -> (first saver layer, dtype kind)
        self.chain = {}  # root -> attention core layer index (scores and probabilities, flash folding)
        self.in_loss = False
        self.model_inputs = set()
        self.custom_functions = {}
        self.last_copy = None  # (source root, copy root) of the latest layout copy
        self.redundant = set()  # copies PyTorch 2 does not keep (RESULT_ONLY_INPLACE)
        self.dispatched = 0  # ops the dispatch mode has seen
        self.masks = set()  # roots of random dropout masks being made (RANDOM_MASK)
        self.packs = {}  # (root, ops dispatched when autograd packed it) -> times packed

    # ---- module structure ----
    @staticmethod
    def _find_blocks(model):
        """Checkpointing segments: modules inside a Sequential/ModuleList whose class appears in the model's
        containers at least twice (ResNet's bottlenecks, EfficientNet's MBConv blocks even where a stage holds
        one, a transformer's layers), that hold parameters and are not containers; the outermost wins."""
        blocks = {}
        containers = (torch.nn.Sequential, torch.nn.ModuleList)
        contained = [c for parent in model.modules() if isinstance(parent, containers) for c in parent.children()]
        kinds = [type(c) for c in contained]
        for child in contained:
            if isinstance(child, containers) or not list(child.children()):
                continue
            if kinds.count(type(child)) >= 2 and any(True for _ in child.parameters()):
                if not any(child in inner for inner in blocks.values()):
                    blocks[child] = set(child.modules())
        order = {m: i for i, m in enumerate(model.modules())}
        return {m: i for i, m in enumerate(sorted(blocks, key=order.get))}

    def push(self, module):
        self.stack.append(module)
        key = self.names.get(module, "?")
        self.calls[key] = self.calls.get(key, 0) + 1

    def pop(self, module):
        if self.stack and self.stack[-1] is module:
            self.stack.pop()

    def _segment(self):
        for m in reversed(self.stack):
            if m in self.blocks:
                return self.blocks[m]
        return -1

    def _new_layer(self, key, name, op):
        taken = {l.name for l in self.layers}
        unique, n = name, 1
        while unique in taken:
            n += 1
            unique = f"{name}#{n}"
        self.layers.append(Layer(unique, op, -1 if self.in_loss else self._segment()))
        self.by_key[key] = len(self.layers) - 1
        return len(self.layers) - 1

    def _layer_for(self, name, op_cls, input_roots):
        if self.in_loss:
            key = ("loss",)
            return self.by_key[key] if key in self.by_key else self._new_layer(key, "loss", "loss")
        if op_cls in ("matmul", "elementwise") and self.flash is not None:
            core = self._attention_core(name, op_cls, input_roots)
            if core is not None:
                return core
        top = self.stack[-1] if self.stack else None
        if top is not None and not list(top.children()):
            path = self.names.get(top, "?")
            key = ("module", path, self.calls.get(path, 0))
            if key not in self.by_key:
                self._new_layer(key, path, _ops.module_class(top) or op_cls)
            return self.by_key[key]
        parent = self.names.get(top, "") if top is not None else ""
        label = name.rstrip("_") or name  # out += identity runs add_: the layer is "add", as the zoo names it
        return self._new_layer(("op", len(self.layers)), f"{parent}.{label}" if parent else label, op_cls)

    def _attention_core(self, name, op_cls, input_roots):
        """softmax(QK^T)V written as two batched matmuls of activations: one attention layer, from the
        scores matmul to the one that consumes the probabilities."""
        in_chain = [self.chain[r] for r in input_roots if r in self.chain]
        activations_only = input_roots and not any(r in self.param_roots for r in input_roots)
        if op_cls == "matmul" and name in ("bmm", "baddbmm", "matmul") and activations_only:
            if in_chain:
                return ("close", in_chain[0])
            parent = self.names.get(self.stack[-1], "") if self.stack else ""
            index = self._new_layer(("op", len(self.layers)), f"{parent}.attention" if parent else "attention",
                                    "attention")
            for r in input_roots:
                self._absorb_scaling(r)
            return ("open", index)
        if in_chain and op_cls == "elementwise":
            return ("inside", in_chain[0])
        return None

    def _absorb_scaling(self, root):
        """q / sqrt(d) before the scores: a flash kernel scales inside, so the separate kernel is not priced;
        the scaled q is a tensor of the layer that made q."""
        owner = self.producer.get(root)
        if owner is None or not self.flash:
            return
        layer = self.layers[owner]
        if layer.params or not layer.name.split(".")[-1].split("#")[0] in ("div", "mul") or len(layer.input_roots) != 1:
            return
        layer.absorbed = True
        source = next(iter(layer.input_roots))
        if source in self.producer:
            self.producer[root] = self.producer[source]
        else:
            del self.producer[root]

    # ---- the dispatch hook ----
    def _root_of(self, t):
        return self.root.get(t._cdata, t._cdata)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = _ops.short_name(func)
        self._unpack_size_only(name, [a for a in args if isinstance(a, torch.Tensor)])
        self.dispatched += 1
        flat_args = list(args) + list(kwargs.values())
        tensors = [a for a in flat_args if isinstance(a, torch.Tensor)]
        for a in flat_args:
            if isinstance(a, (list, tuple)):
                tensors += [t for t in a if isinstance(t, torch.Tensor)]
        outs = [o for o in (out if isinstance(out, (list, tuple)) else (out,)) if isinstance(o, torch.Tensor)]
        self.keep += tensors + outs
        if _ops.returns_alias(func) and not _ops.is_inplace(name):
            base = self._root_of(tensors[0]) if tensors else None
            for o in outs:
                if base is not None and o._cdata != base:
                    self.root[o._cdata] = base
            return out
        if name in _ops.COPIES and tensors:
            self._copy(tensors[0], outs)
            return out
        if name in _ops.RANDOM_MASK or (tensors and all(self._root_of(t) in self.masks for t in tensors)):
            # PyTorch 1.13's dropout off CUDA draws its mask with bernoulli_ and scales it: CUDA's fused
            # native_dropout (and a flash kernel's dropout) does this inside the kernel that applies it.
            for o in outs:
                root = self._root_of(tensors[0]) if _ops.is_inplace(name) and tensors else o._cdata
                self.masks.add(root)
                self.root.setdefault(o._cdata, root) if root != o._cdata else None
                self.numel[root] = o.numel()
            return out
        if name in _ops.CREATION or not tensors:
            for o in outs:
                self.numel.setdefault(o._cdata, o.numel())
            return out
        self._record(func, name, args, tensors, outs)
        return out

    def _copy(self, source, outs):
        """A layout copy: a tensor of its own, made by the layer that made its source, at no cost (COPIES)."""
        src = self._root_of(source)
        for o in outs:
            if src in self.param_roots or src in self.buffer_roots:
                self.root[o._cdata] = src
                continue
            if src in self.producer:
                self.producer[o._cdata] = self.producer[src]
            self.numel[o._cdata] = o.numel()
            if src in self.chain:
                self.chain[o._cdata] = self.chain[src]
            self.last_copy = (src, o._cdata)

    def _bias_add(self, name, roots, activation_roots, outs):
        """The bias add PyTorch 1.13 runs after mm for a 3-D input (addmm's epilogue elsewhere): part of the
        matmul layer that made its input."""
        if name not in ("add", "add_") or len(activation_roots) != 1 or self.in_loss:
            return False
        owner = self.producer.get(activation_roots[0])
        bias = [r for r in roots if r in self.param_roots]
        if owner is None or self.layers[owner].op != "matmul" or len(bias) != 1 or self.param_roots[bias[0]].dim() != 1:
            return False
        if bias[0] not in self.used_params:
            self.used_params.add(bias[0])
            self.layers[owner].params += self.param_roots[bias[0]].numel()
        for o in outs:
            root = activation_roots[0] if _ops.is_inplace(name) else o._cdata
            self.producer[root] = owner
            self.numel[root] = o.numel()
        return True

    def _record(self, func, name, args, tensors, outs):
        roots = [self._root_of(t) for t in tensors]
        frozen = {r for r in roots if r in self.buffer_roots}
        activation_roots = [r for r in roots if r not in self.param_roots and r not in frozen]
        if self._bias_add(name, roots, activation_roots, outs):
            return
        if name in _ops.RESULT_ONLY_INPLACE and self.last_copy and self.last_copy[0] == roots[0]:
            # Keep what PyTorch 2 keeps: the result (this tensor, after the op), not the copy of the input.
            self.redundant.add(self.last_copy[1])
            self.packs[(roots[0], -1)] = 1
            self.saved_roots.setdefault(roots[0], (len(self.layers) - 1, tensors[0].dtype, tensors[0].numel()))
        op_cls = _ops.op_class(name)
        where = self._layer_for(name, op_cls, activation_roots)
        phase = None
        if isinstance(where, tuple):
            phase, where = where
        layer = self.layers[where]
        flops = _ops.forward_flops(name, list(args), [tuple(o.shape) for o in outs])
        layer.forward_flops += flops
        if op_cls in ("conv", "matmul"):
            # One GEMM per operand that needs a gradient: input and weight (2x forward); 1x when the input
            # is the image, or when the weight is frozen.
            operands = tensors[-2:] if name in ("addmm", "baddbmm", "addbmm", "_addmm_activation") else tensors[:2]
            layer.backward_flops += flops * sum(1 for t in operands if t.requires_grad)
            if phase is not None:
                layer.matmul_flops += flops
        elif op_cls == "attention":
            layer.backward_flops += 2.5 * flops  # flash backward recomputes QK^T: 5 matmuls against 2
        else:
            layer.backward_flops += flops
        # Forward traffic: activations read and written (weights are counted once per step, from params).
        # Batch norm reads its input twice: statistics, then the normalisation (layers.cpp's batch_norm).
        reads = sum(t.numel() for t, r in zip(tensors, roots) if r in activation_roots)
        if "batch_norm" in name:
            reads *= 2
        layer.io += reads + (outs[0].numel() if outs else 0)
        for t, r in zip(tensors, roots):
            if r in activation_roots and self.producer.get(r) != where:
                layer.input_roots[r] = max(layer.input_roots.get(r, 0), self.numel.get(r, t.numel()))
        if "layer_norm" in name or "group_norm" in name:
            # Autocast runs these norms in fp32 on the fp32 residual stream: the saved input is 4 bytes wide
            # (layers.cpp's layer_norm).
            layer.autocast_extra += (FP32_BYTES - 2) * tensors[0].numel()
        for r in roots:
            if r in self.param_roots and r not in self.used_params:
                self.used_params.add(r)
                p = self.param_roots[r]
                if p.requires_grad:
                    layer.params += p.numel()
                else:
                    layer.frozen_params += p.numel()
                # LoRA adapts the linear maps of the repeated blocks (the zoo's lora_targets), not a stem or head.
                if op_cls == "matmul" and p.dim() == 2 and layer.segment >= 0:
                    pname = self.param_names[r]
                    attention = any(k in pname for k in ("attn", "attention", "q_proj", "k_proj", "v_proj",
                                                         "o_proj", "qkv", "query", "key", "value", "in_proj"))
                    layer.lora[pname] = (int(p.shape[1]), int(p.shape[0]), attention)
        in_place = _ops.is_inplace(name)
        for i, o in enumerate(outs):
            root = roots[0] if in_place and roots else o._cdata
            if in_place:
                self.root[o._cdata] = root
            self.producer[root] = where
            self.numel[root] = o.numel()
            # Batch / layer norm's per-channel or per-row statistics are fp32 whatever the precision.
            if i > 0 and op_cls == "normalization":
                self.fp32_stats.add(root)
            if phase in ("open", "inside"):
                self.chain[root] = where
        if outs:
            layer.output_shape = tuple(outs[0].shape)
        if phase == "close":
            layer.core_output = outs[0]._cdata if outs else None
            layer.output_shape = tuple(outs[0].shape)
            for r in list(self.chain):
                if self.chain[r] == where:
                    del self.chain[r]
        if phase == "open" and outs:
            layer.score_rows = outs[0].numel() / max(1, outs[0].shape[-1])

    # ---- saved tensors ----
    def pack(self, t):
        root = self._root_of(t)
        if root in self.param_roots or root in self.buffer_roots:
            return t
        # Autograd packs an op's inputs before the op reaches the dispatch mode: at self.dispatched == its index.
        key = (root, self.dispatched)
        self.packs[key] = self.packs.get(key, 0) + 1
        if root not in self.saved_roots:
            self.saved_roots[root] = (len(self.layers) - 1, t.dtype, t.numel())
        return t

    def _unpack_size_only(self, name, tensors):
        """PyTorch 1.13's MeanBackward1 keeps its input (_saved_self); the gradient of a mean needs only sizes,
        and PyTorch 2 keeps only them (mean_backward(grad, sizes, dim, numel, keepdim))."""
        if name not in _ops.SIZE_ONLY_BACKWARD or not tensors:
            return
        key = (self._root_of(tensors[0]), self.dispatched)
        if self.packs.get(key, 0) > 0:
            self.packs[key] -= 1

    def finish_saved(self):
        """Counts each saved tensor once, on the layer that produced it (the zoo's convention); a model input
        on the first layer that reads it. Attention cores keep what a flash kernel keeps."""
        cores = {i for i, l in enumerate(self.layers) if l.op == "attention" and l.core_output is not None}
        kept = {root for (root, _), count in self.packs.items() if count > 0}
        for root, (saver, dtype, elements) in self.saved_roots.items():
            if root in self.redundant or root not in kept:
                continue
            owner = self.producer.get(root)
            if owner is None:
                owner = next((i for i, l in enumerate(self.layers) if root in l.input_roots), max(saver, 0))
            if self.flash and owner in cores and root != self.layers[owner].core_output:
                continue  # the scores and probabilities a flash kernel never stores
            recorded = self.numel.get(root, elements)
            layer = self.layers[owner]
            if root in self.fp32_stats:
                layer.saved_fixed += FP32_BYTES * recorded
            elif root in self.masks:
                layer.saved_fixed += 1.0 * recorded  # a dropout mask: the bool native_dropout keeps on a GPU
            elif dtype.is_floating_point and layer.op != "loss":
                layer.saved += recorded
            else:
                # Integer indices, boolean masks; the loss's fp32 log-probabilities (layers.cpp's cross_entropy).
                size = FP32_BYTES if dtype.is_floating_point else torch.empty((), dtype=dtype).element_size()
                layer.saved_fixed += size * recorded
        for i in cores if self.flash else ():
            layer = self.layers[i]
            # FlashAttention keeps q, k, v (saved by the matmuls, counted on their producers), its output
            # and the fp32 logsumexp per query and head; backward recomputes QK^T: 5 matmuls against 2.
            if layer.core_output not in self.saved_roots:
                layer.saved += self.numel.get(layer.core_output, 0)
            layer.saved_fixed += FP32_BYTES * layer.score_rows
            layer.forward_flops = layer.matmul_flops
            layer.backward_flops = 2.5 * layer.matmul_flops
            # QK^T and PV do 2 x head_dim FLOPs per score each; head_dim is the output's last dimension.
            head_dim = layer.output_shape[-1] if layer.output_shape else 0
            layer.scores = layer.matmul_flops / (4 * head_dim) if head_dim else 0.0
            # One kernel reads q, k, v and writes the output: the scores never reach memory.
            layer.io = layer.input_elements() + self.numel.get(layer.core_output, 0)

    def unused_params(self):
        trainable = frozen = 0
        for root, p in self.param_roots.items():
            if root not in self.used_params:
                if p.requires_grad:
                    trainable += p.numel()
                else:
                    frozen += p.numel()
        return trainable, frozen


@contextlib.contextmanager
def recording(model, flash_attention):
    """Yields a Recorder while its dispatch mode, saved-tensor hooks and module hooks are installed."""
    recorder = Recorder(model, flash_attention)
    handles = []
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(lambda m, args: recorder.push(m)))
        handles.append(module.register_forward_hook(lambda m, args, out: recorder.pop(m)))
    try:
        with torch.autograd.graph.saved_tensors_hooks(recorder.pack, lambda t: t):
            with recorder:
                yield recorder
    finally:
        for h in handles:
            h.remove()
