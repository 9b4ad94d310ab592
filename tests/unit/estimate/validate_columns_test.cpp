// Validation columns that say how a run's system differed from the catalog card: its link between GPUs
// (interconnect) and the power limit its cards were held to (gpu_power_w), each as plan prices it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/estimate/collectives.hpp"
#include "core/estimate/constants.hpp"
#include "core/estimate/validate.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

// The rows of `csv` made ready for prediction with the shipped catalog, in order; a row it cannot prepare throws.
std::vector<detail::Prepared> rows_ready(const std::string& csv) {
  std::vector<detail::Prepared> out;
  for (const Measurement& m : parse_measurements(csv, "t.csv")) {
    std::string why;
    std::optional<detail::Prepared> one = detail::prepare(m, catalog::Catalog::active(), why);
    if (!one) throw std::runtime_error(why);
    out.push_back(std::move(*one));
  }
  return out;
}

// Answer.AI's dual RTX 3090 rows ran "two 3090s (without NVLink)" (fsdp_qlora's benchmarks_03_2024.md), so
// they say interconnect pcie: the catalog's 3090 lists its bridge (112.5 GB/s, 56.25 a direction), and a
// GeForce card without it stages NCCL's traffic through host memory, half of PCIe 4.0 x16's 31.5 GB/s.
TEST(ParseMeasurements, InterconnectPcieDropsTheCatalogsBridge) {
  const std::string head = "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,parallel,interconnect\n";
  const std::string row = "llama2-7b,rtx3090,bf16,1,2,512,train_throughput,0.47,fsdp,";
  const auto prepared = rows_ready(head + row + "pcie\n" + row + "\n");
  ASSERT_EQ(prepared.size(), 2u);
  EXPECT_EQ(prepared[0].config.interconnect, Interconnect::pcie);
  EXPECT_EQ(prepared[1].config.interconnect, Interconnect::card);
  const ModelConstants& k = default_constants();
  EXPECT_NEAR(detail::fabric(k, prepared[0].config, prepared[0].gpu).ring_gbs, 15.752, 1e-9);
  EXPECT_DOUBLE_EQ(detail::fabric(k, prepared[1].config, prepared[1].gpu).ring_gbs, 56.25);
  EXPECT_THROW(parse_measurements(head + row + "nvswitch\n", "t.csv"), InputError);
}

// torchtitan's Grand Teton H100s ran at "the default 500W power limit" (docs/performance.md): the row's
// gpu_power_w is plan's --gpu-power, a card of its own id whose tensor rate the power limit holds to
// power_headroom x its flagship's FLOPs per watt x 500 W (1.1 x 500 / 700 = 0.786 of the H100 SXM5's, whose
// 700 W part is its own flagship); a step of Llama 3 8B at 8K tokens slows by less (its memory-bound share
// keeps its pace). A limit above the board power is not a cap (plan's rule).
TEST(ParseMeasurements, GpuPowerIsThePowerLimitTheRunHeldTo) {
  const std::string head =
      "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,attention,parallel,checkpointing,gpu_power_w\n";
  const std::string row = "llama3-8b,h100-sxm5-80gb,bf16,2,8,8192,train_throughput,0.70,flash,fsdp,selective,";
  const auto prepared = rows_ready(head + row + "500\n" + row + "\n");
  ASSERT_EQ(prepared.size(), 2u);
  EXPECT_EQ(prepared[0].gpu.id, "h100-sxm5-80gb@500w");
  EXPECT_DOUBLE_EQ(prepared[0].gpu.tdp_w, 500);
  EXPECT_DOUBLE_EQ(prepared[1].gpu.tdp_w, 700);
  const ModelConstants& k = default_constants();
  const catalog::Gpu& capped = prepared[0].gpu;
  ASSERT_TRUE(capped.power_flagship_fp16_tflops_per_watt && capped.fp16_tflops);
  const double held = k.power_headroom * *capped.power_flagship_fp16_tflops_per_watt * 500 / *capped.fp16_tflops;
  EXPECT_NEAR(held, 1.1 * 500 / 700, 0.01);
  const Calibration calibration;
  const double ratio =
      detail::predict_throughput(prepared[0], calibration) / detail::predict_throughput(prepared[1], calibration);
  EXPECT_GT(ratio, held);
  EXPECT_LT(ratio, 0.9);
  std::string skipped;
  EXPECT_FALSE(detail::prepare(parse_measurements(head + row + "800\n", "t.csv")[0], catalog::Catalog::active(),
                               skipped));
  EXPECT_THAT(skipped, HasSubstr("800 W is above"));
}

}  // namespace
}  // namespace gpusage::estimate
