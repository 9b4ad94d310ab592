// Hand-built workloads and GPUs whose memory and time can be computed by hand in the tests.
#pragma once

#include "core/catalog/gpu.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate::toy {

// Two blocks of one linear layer each plus a loss head. Per sample: block layers save 100 elements,
// the head saves 10 fixed bytes. Parameters: 1000 per block.
inline workload::Workload two_block_model() {
  workload::Workload w;
  w.id = "toy";
  w.display_name = "Toy";
  w.domain = workload::Domain::language;
  w.seq_len = 8;
  for (int block = 0; block < 2; ++block) {
    workload::Layer l;
    l.name = "block" + std::to_string(block) + ".fc";
    l.op = workload::OpClass::matmul;
    l.output_shape = {50};
    l.params = 1000;
    l.forward_flops = 2000;
    l.backward_flops = 4000;
    l.forward_io_elements = 70;
    l.saved_elements = 100;
    l.segment = block;
    l.input_elements = 20;
    l.lora_targets = {{10, 100}};
    w.layers.push_back(l);
  }
  workload::Layer head;
  head.name = "loss";
  head.op = workload::OpClass::loss;
  head.output_shape = {1};
  head.saved_fixed_bytes = 10;
  head.forward_io_elements = 50;
  w.layers.push_back(head);
  return w;
}

inline catalog::Gpu gpu(double memory_gb = 1.0) {
  catalog::Gpu g;
  g.id = "toygpu";
  g.name = "Toy GPU";
  g.architecture = "Ampere";
  g.compute_capability = "8.0";
  g.sm_count = 100;
  g.cuda_cores = 10000;
  g.boost_clock_mhz = 2000;
  g.memory_gb = memory_gb;
  g.memory_type = "HBM3";
  g.memory_bandwidth_gbs = 1000;
  g.tdp_w = 400;
  g.fp32_tflops = 40;
  g.tf32_tflops = 80;
  g.fp16_tflops = 160;
  g.bf16_tflops = 160;
  return g;
}

inline TrainingConfig config(int batch, catalog::Precision precision, Optimizer optimizer) {
  TrainingConfig c;
  c.batch_per_gpu = batch;
  c.precision = precision;
  c.optimizer = optimizer;
  return c;
}

}  // namespace gpusage::estimate::toy
