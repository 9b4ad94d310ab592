// The documented constants of the memory and step-time models. Each says where it comes from.
// The speed constants (efficiencies, kernel_fixed_s, host_dispatch_s) are the output of
// `gpusage validate data/validation/published.csv --fit`, fitted on every current-software throughput row
// on one node (validate_detail.hpp, fits_speed) inside validate's physical bounds (efficiencies in (0, 1]), one set for
// every card: no per-architecture or per-card factor; so is allocator_unreleasable_fraction, on the memory verdicts.
// Errors are reported only out of sample: `validate --cv gpu` refits without each GPU in turn
// (docs/MODEL.md). Refit and paste the printed values here when the validation data grows.
// `gpusage plan --calibration` refines them per device.
#pragma once

#include <string>

namespace gpusage::estimate {

struct ModelConstants {
  // ---- Memory ----
  // CUDA context with lazy module loading (CUDA >= 11.7, PyTorch default since 1.13 with
  // CUDA_MODULE_LOADING=LAZY in 2.x): about 0.29 GB; eager loading about 0.67 GB (PyTorch PR #86509).
  double cuda_context_bytes = 0.29e9;
  // Without lazy loading (CUDA < 11.7, or PyTorch < 1.13, which sets CUDA_MODULE_LOADING=LAZY itself) every
  // kernel of PyTorch, cuBLAS and cuDNN is loaded into the context when the library loads: 666,632,192
  // bytes measured in the same PR against 287,047,680 lazily. (It was 1.0 GB, from "more than 1000 MB",
  // pytorch/pytorch#107667, chosen to explain FlagPerf's 8-GPU small-batch rows before NCCL's buffers
  // below were counted; those now explain part of that gap: docs/MODEL.md.)
  double cuda_context_eager_bytes = 0.667e9;
  // NCCL's communicator on each rank of a data-parallel run: its channels' send/receive buffers (NCCL_BUFFSIZE,
  // 4 MiB per protocol and peer), which nvidia-smi counts beside PyTorch's allocator. Measured with PyTorch on
  // 4x A100 with NVLink after one all-reduce: 688 MB for a group of more than two GPUs, 544 MB for two
  // (NVIDIA/nccl#964); the memory grows with the channel count, not with the number of GPUs (NVIDIA/nccl#986).
  double nccl_communicator_bytes = 688e6;
  double nccl_communicator_two_gpus_bytes = 544e6;
  // Caching-allocator overhead on top of live tensors: 512 B rounding, 2 MiB/20 MiB segments and
  // fragmentation (DNNMem, FSE'20, reports 5-15% over the live set). Applied to activations + workspace.
  double allocator_overhead_fraction = 0.08;
  // The part of that reserve the allocator cannot give back at the card's edge, as a fraction of the same
  // activations + workspace: free space inside segments that still hold live tensors. When cudaMalloc
  // fails, PyTorch's caching allocator frees its cached free segments and retries before it raises
  // out-of-memory (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator::malloc: release_cached_blocks,
  // then alloc_block again), so what has to fit is the live set plus this fragmentation, while nvidia-smi's
  // peak counts the whole reserve. Fitted by `validate --fit` on the runs that ran and the max-batch
  // brackets, inside [0, allocator_overhead_fraction] and drawn to the prior that all of the reserve stays
  // (docs/MODEL.md); --cv refits it per fold (6.5% in 27 of 28 leave-one-GPU-out folds).
  double allocator_unreleasable_fraction = 0.065;
  // cuDNN / cuBLAS workspace kept by the allocator during a step. cuBLAS asks for up to 32 MiB per
  // handle+stream on Hopper/Blackwell (CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB) and cuDNN's benchmark
  // mode picks algorithms with workspaces of tens to hundreds of MiB; 256 MiB is a typical ceiling.
  double library_workspace_bytes = 256.0 * 1024 * 1024;
  // QLoRA: NF4 stores 4 bits per weight plus double-quantised constants, 0.127 bit/param
  // (Dettmers et al. 2023, "QLoRA", section 3).
  double qlora_bits_per_param = 4.0 + 0.127;

  // ---- Speed ----
  // Fraction of the dense tensor-core peak that large conv / GEMM kernels reach in training (on GeForce, twice that
  // of the halved FP32-accumulate peak, at most all of it: step_time.cpp). The GEMMs' is fitted inside the largest
  // measured fraction, 0.85 (validate.hpp, FitBounds).
  double conv_tensor_efficiency = 1.0;
  double matmul_tensor_efficiency = 0.8333;
  // TF32 GEMMs and convolutions relative to the 16-bit ones, as a fraction of their own (half as high)
  // peak: the same tile shapes move twice the bytes per FLOP through shared memory and registers, so at
  // BERT's and ResNet's shapes TF32 kernels sit further below their peak (fitted). Only on cards whose tensor
  // cores do TF32 faster than their CUDA cores do FP32 (A100: 1,024 TF32 FLOPs per SM and cycle, H100 1,893,
  // the workstation cards 512): GeForce RTX 30/40/50 tensor cores do TF32 at the FP32 rate (256 per SM and
  // cycle on the RTX 4090), slowly enough for the operands to keep up, so their TF32 kernels reach the
  // 16-bit efficiency (step_time.cpp; issue 28, docs/MODEL.md: GeForce TF32 rows went from -17%..-31% to
  // -4%..-27%).
  double tf32_relative_efficiency = 0.8824;
  // Fraction of the CUDA-core FP32 peak reached by FP32 (non-TF32) conv / GEMM kernels.
  double conv_fp32_efficiency = 0.9423;
  double matmul_fp32_efficiency = 0.7136;
  // Fused (flash) attention's two matmuls as a fraction of the GEMM efficiency, its softmax priced apart
  // (sfu_results_per_sm_cycle below): FlashAttention-2 reaches 50-73% of the A100 peak against 70-80% for a GEMM
  // (Dao 2023). Fitted: 0.81 (0.60 in session 18, 0.79 in session 15): the rows hold it loosely, trading it against
  // memory_efficiency and the per-kernel time; it moved when torch.optim's unfused optimizer steps were priced at
  // their real traffic (docs/MODEL.md, session 19).
  // Unfused attention's batched GEMMs run at the GEMM efficiency with their own tile cost (step_time.cpp).
  double attention_relative_efficiency = 0.8062;
  // Fused (flash) attention computes each score's softmax on the CUDA cores between its two matmuls, and the
  // tensor cores wait for it: one exponential per score and pass on the special-function units, 16 results per
  // SM per cycle on every architecture since Volta (CUDA C++ Programming Guide, "Arithmetic Instructions",
  // the exp2 / __expf row), and attention_softmax_fp32_ops FP32 operations on the CUDA cores: forward (Dao 2023,
  // "FlashAttention-2", Algorithm 1) the running row maximum, the subtraction folded into the scaled exponent and
  // the running row sum; backward (Algorithm 2) the subtraction in P = exp(S - L), dP - D and P x (dP - D). It
  // is why FlashAttention runs further below the GEMM rate at head dimension 64 than at 128 (half the matmul work
  // per score) and on data-center cards than on GeForce ones: an H100 SXM does 989 TFLOPS of 16-bit matmul
  // against 3.9 T exponentials/s (Shah et al. 2024, "FlashAttention-3"), 256 FLOPs per exponential; an RTX 4090
  // at FP32 accumulation 165 TFLOPS against 5.2 T/s, 32. Counted, not fitted.
  double sfu_results_per_sm_cycle = 16;
  double attention_softmax_fp32_ops = 3;
  // Depthwise convolutions (MobileNet, EfficientNet) do a few MACs per output element and run as
  // memory-bound kernels, but cuDNN's depthwise kernels (their weight gradient above all) reach only a
  // fraction of the bandwidth plain elementwise kernels do. Relative to memory_bound_bandwidth (planner.hpp).
  double depthwise_conv_relative_efficiency = 0.2247;
  // NCHW tensors under tensor cores: cuDNN's tensor-core convolutions work on NHWC, so an NCHW
  // convolution transposes its input and output on the way (NVIDIA Deep Learning Performance Guide,
  // "Convolutional Layers": "tensor layout ... NHWC ... NCHW inputs are transposed"). Each pass is one
  // extra read and write of the convolution's input and output, costed at 4 bytes an element whatever
  // the precision (step_time.cpp); none with --channels-last. One pass, as the guide describes: not
  // fitted, because the rows cannot tell it from the convolution efficiency (fitted per held-out GPU it
  // ranged 1.0-1.32; docs/MODEL.md).
  double nchw_transpose_passes = 1.0;
  // The part of the L2 cache that holds what one kernel wrote for the next one to read. A memory-bound kernel
  // (normalisation, activation, residual add, a layout transpose) reads a tensor the kernel before it has
  // just written; of a tensor of S bytes written through an L2 of C bytes, about exp(-S / C) is still
  // resident when it is read (replacement evicts a line with probability 1/C per line written). 6 MB on
  // GA102 keeps only small tensors; 72 MB on AD102 and 96 MB on GB202 keep a ResNet's later stages. Not
  // fitted: the whole L2 (docs/MODEL.md, session 9, has what it moved).
  double l2_reuse_fraction = 1.0;
  // Fraction of peak DRAM bandwidth the memory system delivers to memory-bound kernels (normalisation,
  // elementwise, pooling, optimizer) when the SMs keep enough requests in flight (below).
  double memory_efficiency = 0.918;
  // What one SM keeps in flight limits what it can stream (Little's law: throughput = bytes in flight /
  // latency; Volkov 2016, "Understanding Latency Hiding on GPUs", UC Berkeley EECS-2016-143). A streaming
  // kernel at full occupancy has about one 16-byte vector load per resident thread outstanding (2,048
  // threads: 32 KiB), against a loaded DRAM latency of about 600 ns: 32 KiB / 600 ns = 54.6 GB/s per SM.
  // A memory-bound kernel's time is then the DRAM's plus the SMs' (bytes / (SMs x this)): negligible where
  // an SM has little bandwidth to cover (an RTX 4090's 128 SMs share 1,008 GB/s, 7.9 GB/s each) and large
  // where it has much (a B200's 148 share 8 TB/s, 54 GB/s each). It is what the record's ResNet-50 rows
  // show across cards (docs/MODEL.md, session 14: GDDR cards too slow, H200 and B200 too fast under one
  // bandwidth fraction). Not fitted: fitted per fold, it would trade against memory_efficiency.
  double sm_memory_gbs = 54.6;
  // A GEMM / conv fills the GPU only with enough output tiles: with 128x128 tiles, about two waves of
  // CTAs per SM are needed to hide the tail (wave quantisation; NVIDIA "GPU Performance Background
  // User's Guide"). Below that the kernel runs at the fraction of SMs it can occupy.
  double tile_elements = 128.0 * 128.0;
  double tiles_per_sm_to_fill = 2.0;
  // Tensor math under a power limit: a card whose FP16 peak per watt of TDP exceeds its architecture's
  // flagship's (Gpu::power_flagship: the capability's highest-TDP card, whose TDP holds its rated
  // clocks) clocks down until it fits its TDP. Lower clocks run at lower voltage and so do more FLOPs
  // per joule: such a card sustains at most power_headroom x the flagship's FLOPs per watt x its own TDP.
  // A GeForce card, flagship or not, counts at its FP16-accumulate rate, the one its tensor cores run at (its
  // FP32-accumulate rate is held at half). RTX A6000 (300 W, 154.8 TFLOPS on paper) trains BERT-large
  // only 27% faster than the RTX 3090 (350 W, 71.2); A100 PCIe 40 GB (250 W) 14% slower than SXM
  // (400 W) at the same peak (Lambda's benchmark, published.csv). Dynamic power goes as f x V^2 and
  // the voltage falls with the clock, so a card at 80% of its flagship's clock does about 1.3x the FLOPs
  // per joule; a card at 91% of its flagship's clock (the RTX 3090 against the RTX 3090 Ti) about 1.1x. Both
  // sides count the full tensor rate (step_time.cpp, power_limited_clock_fraction). 1.1: with 1.3 the RTX 3090
  // (0.87 x its clock at 1.0) keeps the whole GeForce boost and its GEMM- and conv-bound rows come out 8-10% too
  // fast (docs/MODEL.md, session 18). Not fitted: held out by GPU, the fit cannot see the card it would limit.
  double power_headroom = 1.1;
  // GeForce boards run above the boost clock on their spec sheet: GPU Boost raises the clock along the
  // voltage/frequency curve while power and temperature allow, and NVIDIA quotes GeForce rates at a
  // typical boost clock, not the ceiling (data-center datasheets quote the maximum clock, which their cards
  // hold or fall below). A stock RTX 4090 at 97% load and 447 W runs 2,730 MHz against its rated 2,520
  // (HotHardware, GPU-Z log of a stock card, 2022-10: 1.083); KitGuru measured a factory-overclocked MSI RTX
  // 4090 Suprim Liquid X at 2,760-2,820 MHz averaged over 30 minutes of Metro Exodus. So a GeForce card's
  // math runs at this multiple of its catalog rates (tensor and CUDA-core alike; step_time.cpp), before the
  // power limit. Not fitted: the stock card's figure.
  double geforce_boost_clock_ratio = 1.08;
  // Cycles an output tile of a GEMM / conv spends outside its K loop and does not hide behind another
  // tile's math: filling the shared-memory pipeline from DRAM before the first MMA and storing the
  // accumulators after the last (CUTLASS's prologue and epilogue). The K loop takes
  // 2 x tile_elements x K / (tensor FLOPs per SM per cycle) cycles, so a short reduction (a 1x1 conv
  // over 64 channels, ViT-Ti's 192-wide linears) loses more, and more on a GPU whose SMs do more math
  // per cycle (H100 3,786 FP16 FLOPs/cycle/SM, A100 2,048, GeForce Ampere/Ada 512 at FP32
  // accumulation) while DRAM latency stays about the same. A few hundred cycles: one DRAM round trip is
  // 500-800 cycles, half of it hidden by the SM's other resident tile. Not fitted: fitted per held-out
  // GPU it ranged 195-1,867 cycles, standing in for whatever the held-out card lacked (docs/MODEL.md).
  double gemm_tile_fixed_cycles = 300;
  // GPU-side fixed time per kernel (launch latency, ramp-up and tail), seconds.
  double kernel_fixed_s = 1.875e-06;
  // Host-side dispatch time per kernel in eager PyTorch (Python + dispatcher + launch): 10-20 us per op
  // is the usual figure; the GPU is starved when kernels are shorter than this.
  double host_dispatch_s = 1.2e-05;
  // Kernels per layer: forward 1; backward 2 for conv/matmul (input and weight gradients), 1 otherwise.
  // Optimizer: multi-tensor (foreach) kernels process many parameters per launch.
  double optimizer_tensors_per_kernel = 32;
  // Fraction of the backward pass that gradient all-reduce can hide behind (DDP buckets of 25 MB start
  // while backward is still running; the last bucket cannot overlap).
  double allreduce_overlap_fraction = 0.8;
  double ddp_bucket_bytes = 25.0 * 1024 * 1024;
  // Achievable fraction of link bandwidth for NCCL ring all-reduce (bus bandwidth / link bandwidth).
  double link_efficiency = 0.8;
  // CPU offload's optimizer step (TrainingConfig::offload): a memory-bound sweep of host memory, like the
  // GPU's, at this bandwidth per rank, GB/s. DeepSpeed's CPU-Adam (vectorised, on every core) is bound by DRAM:
  // a two-socket server's STREAM triad is 150-400 GB/s, shared by its 8 ranks; a desktop's dual-channel DDR5
  // 60-80 GB/s. 40: a server's per-rank share, or a desktop at about half its STREAM figure. Not checked
  // against published rows yet (docs/MODEL.md, "CPU offload").
  double host_optimizer_gbs = 40;
  // PyTorch's own CPU Adam(W), which FSDP's CPU offload steps with, is 5-7x slower than DeepSpeed's CPU-Adam
  // (DeepSpeed's ZeRO-Offload tutorial): 6.
  double torch_cpu_optimizer_slowdown = 6;
  // Network between nodes when --nodes > 1 and no --network-gbps is given: 100 Gb/s per node
  // (a common InfiniBand EDR / 100 GbE figure).
  double default_network_gbs = 12.5;
};

// The constants in force: the fitted defaults above.
const ModelConstants& default_constants();

// The speed constants before any fit, from the literature and the hardware documents alone (planner.cpp
// gives each its source): where every `validate` fit starts and what it is drawn back to where the rows
// cannot decide. Never used to predict. The memory constants, and the speed constants the fit does not
// move (power_headroom, gemm_tile_fixed_cycles, nchw_transpose_passes), are the defaults'.
const ModelConstants& prior_constants();

}  // namespace gpusage::estimate
