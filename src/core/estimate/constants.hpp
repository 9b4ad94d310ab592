// The documented constants of the memory and step-time models. Each says where it comes from.
// The speed constants (efficiencies, kernel_fixed_s, depthwise and
// architecture factors) are the output of `gpusage validate data/validation/published.csv --fit`, fitted
// on every current-software throughput row inside validate's physical bounds (efficiencies in (0, 1],
// architecture factors in [0.5, 2] and never lifting a GEMM above its peak). Errors are reported only
// out of sample: `validate --cv gpu` refits without each GPU in turn (docs/MODEL.md). Refit and paste
// the printed values here when the validation data grows. `gpusage plan --calibration` refines them per device.
#pragma once

#include <map>
#include <string>

namespace gpusage::estimate {

struct ModelConstants {
  // ---- Memory ----
  // CUDA context with lazy module loading (CUDA >= 11.7, PyTorch default since 1.13 with
  // CUDA_MODULE_LOADING=LAZY in 2.x): about 0.29 GB; eager loading about 0.67 GB (PyTorch PR #86509).
  double cuda_context_bytes = 0.29e9;
  // Without lazy loading (CUDA < 11.7, or PyTorch < 1.13, which sets CUDA_MODULE_LOADING=LAZY itself) every
  // kernel of PyTorch, cuBLAS and cuDNN is loaded into the context when the library loads: "more than
  // 1000 MB" (PyTorch maintainer ptrblck, pytorch/pytorch#107667; a cuDNN handle alone took 750 MB on
  // cuDNN 7, pytorch/pytorch#12873).
  double cuda_context_eager_bytes = 1.0e9;
  // Caching-allocator overhead on top of live tensors: 512 B rounding, 2 MiB/20 MiB segments and
  // fragmentation (DNNMem, FSE'20, reports 5-15% over the live set). Applied to activations + workspace.
  double allocator_overhead_fraction = 0.08;
  // cuDNN / cuBLAS workspace kept by the allocator during a step. cuBLAS asks for up to 32 MiB per
  // handle+stream on Hopper/Blackwell (CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB) and cuDNN's benchmark
  // mode picks algorithms with workspaces of tens to hundreds of MiB; 256 MiB is a typical ceiling.
  double library_workspace_bytes = 256.0 * 1024 * 1024;
  // QLoRA: NF4 stores 4 bits per weight plus double-quantised constants, 0.127 bit/param
  // (Dettmers et al. 2023, "QLoRA", section 3).
  double qlora_bits_per_param = 4.0 + 0.127;

  // ---- Speed ----
  // Fraction of the dense tensor-core peak that large conv / GEMM kernels reach in training.
  double conv_tensor_efficiency = 0.8019;
  double matmul_tensor_efficiency = 0.6481;
  // TF32 GEMMs and convolutions relative to the 16-bit ones, as a fraction of their own (half as high)
  // peak: the same tile shapes move twice the bytes per FLOP through shared memory and registers, so at
  // BERT's and ResNet's shapes TF32 kernels sit further below their peak (fitted).
  double tf32_relative_efficiency = 0.926;
  // Fraction of the CUDA-core FP32 peak reached by FP32 (non-TF32) conv / GEMM kernels.
  double conv_fp32_efficiency = 0.88;
  double matmul_fp32_efficiency = 0.8646;
  // Attention core (softmax(QK^T)V) as a fraction of the matmul efficiency (FlashAttention reaches
  // 50-70% of peak on A100/H100: Dao 2023, "FlashAttention-2").
  double attention_relative_efficiency = 1.0;
  // Depthwise convolutions (MobileNet, EfficientNet) do a few MACs per output element and run as
  // memory-bound kernels, but cuDNN's depthwise kernels (their weight gradient above all) reach only a
  // fraction of the bandwidth plain elementwise kernels do. Relative to memory_efficiency.
  double depthwise_conv_relative_efficiency = 0.2195;
  // Per-architecture factor on the GEMM/conv compute rate, keyed by compute capability: how close the
  // libraries of the day get to each architecture's peak (e.g. Hopper needs wgmma kernels that older
  // cuDNN lacks). Fitted where published runs exist; others get the median factor (step_time.cpp).
  std::map<std::string, double> architecture_compute_factor = {
      {"7.0", 1.136}, {"7.5", 0.8}, {"8.0", 1.08}, {"8.6", 1.136}, {"8.9", 0.6782}, {"9.0", 0.800}, {"10.0", 0.5832}};
  // NCHW tensors under tensor cores: cuDNN's tensor-core convolutions work on NHWC, so an NCHW
  // convolution transposes its input and output on the way (NVIDIA Deep Learning Performance Guide,
  // "Convolutional Layers": "tensor layout ... NHWC ... NCHW inputs are transposed"). One extra read and
  // write of the convolution's input and output per pass; none with --channels-last.
  double nchw_transpose_passes = 1.0;
  // Fraction of peak DRAM bandwidth reached by memory-bound kernels (normalisation, elementwise,
  // pooling, optimizer). STREAM-like kernels reach 80-90% on HBM and GDDR.
  double memory_efficiency = 0.75;
  // A GEMM / conv fills the GPU only with enough output tiles: with 128x128 tiles, about two waves of
  // CTAs per SM are needed to hide the tail (wave quantisation; NVIDIA "GPU Performance Background
  // User's Guide"). Below that the kernel runs at the fraction of SMs it can occupy.
  double tile_elements = 128.0 * 128.0;
  double tiles_per_sm_to_fill = 2.0;
  // GPU-side fixed time per kernel (launch latency, ramp-up and tail), seconds.
  double kernel_fixed_s = 1.165e-06;
  // Host-side dispatch time per kernel in eager PyTorch (Python + dispatcher + launch): 10-20 us per op
  // is the usual figure; the GPU is starved when kernels are shorter than this.
  double host_dispatch_s = 12e-6;
  // Kernels per layer: forward 1; backward 2 for conv/matmul (input and weight gradients), 1 otherwise.
  // Optimizer: multi-tensor (foreach) kernels process many parameters per launch.
  double optimizer_tensors_per_kernel = 32;
  // Fraction of the backward pass that gradient all-reduce can hide behind (DDP buckets of 25 MB start
  // while backward is still running; the last bucket cannot overlap).
  double allreduce_overlap_fraction = 0.8;
  double ddp_bucket_bytes = 25.0 * 1024 * 1024;
  // Achievable fraction of link bandwidth for NCCL ring all-reduce (bus bandwidth / link bandwidth).
  double link_efficiency = 0.8;
  // Network between nodes when --nodes > 1 and no --network-gbps is given: 100 Gb/s per node
  // (a common InfiniBand EDR / 100 GbE figure).
  double default_network_gbs = 12.5;
};

// The constants in force: the fitted defaults above.
const ModelConstants& default_constants();

}  // namespace gpusage::estimate
