"""What each PyTorch op costs and which step-time class prices it (docs/MODEL.md, "How traced workloads are
priced"). The per-element FLOP counts are those of gpusage's zoo (src/core/workload/layers.cpp), so that a
traced model and the same model from the zoo add up alike.
"""

import math

# ATen op name (without "aten." and the overload) -> gpusage op class.
CONV = {"convolution", "_convolution", "conv2d", "conv1d", "conv3d", "cudnn_convolution", "mkldnn_convolution",
        "convolution_overrideable", "_slow_conv2d_forward", "slow_conv3d_forward", "thnn_conv2d",
        "slow_conv_transpose2d", "cudnn_convolution_transpose", "conv_transpose2d"}
MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addbmm", "_addmm_activation", "dot", "mv", "addmv"}
ATTENTION = {"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
             "_scaled_dot_product_cudnn_attention", "_efficient_attention_forward", "_flash_attention_forward",
             "_scaled_dot_product_flash_attention_for_cpu", "scaled_dot_product_attention"}
NORMALIZATION = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
                 "_native_batch_norm_legit_no_training", "cudnn_batch_norm", "miopen_batch_norm",
                 "native_layer_norm", "native_group_norm", "_fused_rms_norm", "rms_norm", "batch_norm",
                 "layer_norm", "group_norm"}
POOLING = {"max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool1d", "max_pool2d", "avg_pool2d",
           "avg_pool3d", "avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_avg_pool2d",
           "adaptive_max_pool2d", "adaptive_avg_pool1d", "adaptive_max_pool1d"}
EMBEDDING = {"embedding", "embedding_bag", "_embedding_bag"}
# Memory-bound ops gpusage prices as elementwise kernels: FLOPs per output element (layers.cpp's constants).
ELEMENTWISE_FLOPS = {
    "relu": 1, "relu_": 1, "threshold": 1, "threshold_": 1, "hardtanh": 1, "hardtanh_": 1, "relu6": 1,
    "add": 1, "add_": 1, "sub": 1, "sub_": 1, "mul": 1, "mul_": 1, "div": 1, "div_": 1, "neg": 1, "rsub": 1,
    "sigmoid": 3, "sigmoid_": 3, "tanh": 3, "tanh_": 3, "silu": 4, "silu_": 4, "gelu": 8, "gelu_": 8,
    "hardswish": 4, "hardswish_": 4, "hardsigmoid": 3, "hardsigmoid_": 3, "leaky_relu": 1, "leaky_relu_": 1,
    "elu": 3, "elu_": 3, "mish": 6, "softplus": 3, "exp": 1, "log": 1, "sqrt": 1, "rsqrt": 1, "pow": 1,
    "abs": 1, "clamp": 1, "clamp_": 1, "clamp_min": 1, "clamp_min_": 1, "clamp_max": 1, "erf": 1,
    "reciprocal": 1, "sign": 1, "square": 1, "maximum": 1, "minimum": 1, "where": 1, "masked_fill": 1,
    "masked_fill_": 1, "_softmax": 4, "softmax": 4, "_log_softmax": 4, "log_softmax": 4, "native_dropout": 1,
    "dropout": 1, "bernoulli_": 1, "bernoulli": 1, "clone": 0, "copy_": 0, "_to_copy": 0, "cat": 0,
    "stack": 0, "constant_pad_nd": 0, "reflection_pad2d": 0, "replicate_pad2d": 0, "roll": 0, "flip": 0,
    "index_select": 0, "gather": 0, "scatter": 0, "scatter_add": 0, "index": 0, "index_put_": 0,
    "upsample_nearest2d": 0, "upsample_bilinear2d": 1, "upsample_nearest1d": 0, "upsample_nearest3d": 0,
    "_upsample_bilinear2d_aa": 1, "upsample_bicubic2d": 2, "pixel_shuffle": 0, "repeat": 0,
    "mean": 1, "sum": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "var": 2, "var_mean": 3, "std": 2,
    "cumsum": 1, "sort": 1, "topk": 1, "argmax": 1, "fill_": 0, "zero_": 0, "lerp": 2, "addcmul": 2,
    "addcdiv": 2, "logsumexp": 3, "norm": 2, "linalg_vector_norm": 2, "_unsafe_index": 0, "tril": 0,
    "triu": 0, "eq": 1, "ne": 1, "lt": 1, "gt": 1, "le": 1, "ge": 1, "logical_not": 1, "floor": 1,
    "round": 1, "cos": 1, "sin": 1, "atan2": 1, "fmod": 1, "remainder": 1, "contiguous": 0,
}
REDUCTIONS = {"mean", "sum", "amax", "amin", "max", "min", "var", "var_mean", "std", "logsumexp", "norm",
              "linalg_vector_norm", "argmax"}
# Ops of the loss (they run after the model's forward): cross-entropy, regression losses.
LOSS_FLOPS_PER_ELEMENT = 4  # max, exp, sum, log of the log-softmax (layers.cpp's cross_entropy)
# Ops that make a tensor from nothing: no inputs read, no cost worth pricing.
CREATION = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange",
            "scalar_tensor", "new_empty", "new_zeros", "new_ones", "new_full", "empty_strided", "randn",
            "rand", "randint", "normal_", "uniform_", "lift_fresh", "_local_scalar_dense", "randperm",
            "linspace", "eye", "new_empty_strided", "_has_compatible_shallow_copy_type", "detach_",
            "_fused_sdp_choice", "is_same_size", "sym_size", "sym_numel", "sym_stride"}

# torch.nn module class name -> op class, for leaf modules (their ops are one layer).
MODULE_CLASSES = [
    ("Conv", "conv"), ("Linear", "matmul"), ("Bilinear", "matmul"), ("Embedding", "embedding"),
    ("Norm", "normalization"), ("Pool", "pooling"), ("Loss", "loss"),
]


def short_name(func):
    """aten.add_.Tensor -> add_"""
    name = getattr(func, "__name__", str(func))  # "add_.Tensor" on OpOverload
    packet = getattr(func, "overloadpacket", None)
    if packet is not None:
        name = getattr(packet, "__name__", name)
    return name.split(".")[0]


# Ops that return a view of their input however their schema reads (_unsafe_view has no alias annotation).
VIEWS = {"_unsafe_view", "_reshape_alias", "view", "reshape", "t", "transpose", "permute", "expand", "squeeze",
         "unsqueeze", "select", "slice", "split", "split_with_sizes", "chunk", "unbind", "as_strided", "narrow",
         "flatten", "unflatten", "detach", "alias", "view_as", "expand_as", "movedim", "diagonal", "unfold",
         "lift_fresh", "view_as_real", "numpy_T", "mT", "swapaxes", "_neg_view", "_conj"}
# Copies that only change the layout (x.contiguous(), MultiheadAttention's head split): the zoo's layers,
# whose efficiencies the validation runs calibrated, price no kernel for them, so a traced model does not
# either; the copy is a tensor of its own (autograd may keep it) on the layer whose output it copies.
COPIES = {"clone", "contiguous"}
# In-place activations whose backward needs only their output (derivatives.yaml in PyTorch 2 saves `result`
# for hardtanh_, HardtanhBackward1). PyTorch 1.13 runs the out-of-place formula on a clone of the input
# (HardtanhBackward0 keeps _saved_self): a copy of every ReLU6 input that PyTorch 2 no longer keeps.
RESULT_ONLY_INPLACE = {"hardtanh_"}
# Ops that draw a random mask from a fresh tensor: part of the dropout that applies it.
RANDOM_MASK = {"bernoulli_", "bernoulli"}
# Ops whose gradient needs only their input's sizes, which PyTorch 1.13 still saves whole (MeanBackward1).
SIZE_ONLY_BACKWARD = {"mean"}


def returns_alias(func):
    """True for view and in-place ops: their output shares its input's storage (the schema's (a) or (a!))."""
    if short_name(func) in VIEWS:
        return True
    schema = getattr(func, "_schema", None)
    if schema is None or not schema.returns:
        return False
    return "(a" in str(schema.returns[0].type) or schema.returns[0].alias_info is not None


def is_inplace(name):
    return name.endswith("_") and not name.startswith("_")


def op_class(name):
    if name in CONV:
        return "conv"
    if name in MATMUL:
        return "matmul"
    if name in ATTENTION:
        return "attention"
    if name in NORMALIZATION:
        return "normalization"
    if name in POOLING:
        return "pooling"
    if name in EMBEDDING:
        return "embedding"
    if name in ELEMENTWISE_FLOPS:
        return "elementwise"
    return "aten." + name  # not one gpusage knows: plan names it with its FLOP share


def module_class(module):
    kind = type(module).__name__
    for marker, cls in MODULE_CLASSES:
        if marker in kind:
            return cls
    return None


def numel(shape):
    return math.prod(int(d) for d in shape)


def forward_flops(name, args, out_shapes):
    """Forward FLOPs of one op (a multiply-add is 2), from its argument and output shapes."""
    shapes = [tuple(a.shape) for a in args if hasattr(a, "shape")]
    out = numel(out_shapes[0]) if out_shapes else 0
    if name in CONV:
        weight = shapes[1]
        transposed = len(args) > 6 and args[6] is True  # convolution(input, weight, bias, stride, ..., transposed, ...)
        per_output = numel(weight[1:])  # in_channels / groups x kernel
        if transposed:  # weight is in x out/groups x kernel: each input element feeds out/groups x kernel
            return 2.0 * numel(shapes[0]) * numel(weight[1:])
        return 2.0 * out * per_output
    if name in MATMUL:
        mats = shapes[-2:] if name in ("addmm", "baddbmm", "addbmm", "_addmm_activation", "addmv") else shapes[:2]
        if len(mats) < 2 or not mats[0]:
            return 0.0
        inner = mats[0][-1]
        return 2.0 * out * inner
    if name in ATTENTION:
        q, k = shapes[0], shapes[1]
        return 4.0 * numel(q[:-2]) * q[-2] * k[-2] * q[-1]  # QK^T and PV, 2 x L x S x E each per head
    if name in NORMALIZATION:
        per = 2 if "batch" in name else 5 if "layer" in name or "group" in name else 4
        return float(per * out)
    if name in POOLING:
        if shapes and out:
            return float(max(1.0, numel(shapes[0]) / out) * out)
        return float(out)
    if name in EMBEDDING:
        return 0.0
    if name in REDUCTIONS and shapes:
        return float(ELEMENTWISE_FLOPS.get(name, 1) * numel(shapes[0]))  # one per element reduced
    return float(ELEMENTWISE_FLOPS.get(name, 1) * out)
