// Validation's parser, grouping and the intervals plan takes from it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/estimate/uncertainty.hpp"
#include "core/estimate/validate.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

const char* kHeader =
    "model,gpu,precision,batch_per_gpu,num_gpus,resolution,seq_len,metric,value,framework,software_date,source,notes,"
    "attention,parallel,task,layout,data,fails_at,amp\n";

// The message parse_measurements throws for `csv`, or "" when it parses.
std::string parse_error(const std::string& csv) {
  try {
    parse_measurements(csv, "t.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Each row made ready for prediction with the shipped catalog; a row it cannot prepare fails the test.
std::vector<detail::Prepared> prepare_all(const std::vector<Measurement>& rows) {
  std::vector<detail::Prepared> prepared;
  for (const Measurement& m : rows) {
    std::string skipped;
    auto p = detail::prepare(m, catalog::Catalog::active(), skipped);
    EXPECT_TRUE(p) << skipped;
    if (p) prepared.push_back(std::move(*p));
  }
  return prepared;
}

// The training configs validate prepares from the rows of `csv`.
std::vector<TrainingConfig> prepared_configs(const std::string& csv) {
  std::vector<TrainingConfig> configs;
  for (const detail::Prepared& p : prepare_all(parse_measurements(csv, "t.csv"))) configs.push_back(p.config);
  return configs;
}

TEST(ParseMeasurements, ReadsEveryColumnOfThePublishedFormat) {
  const auto rows = parse_measurements(
      std::string(kHeader) +
          "bert-large,a100-sxm4-80gb,fp16,32,8,,384,train_throughput,120.5,PyTorch 22.09 NGC,2022-09,"
          "https://github.com/lambdal/deeplearning-benchmark/blob/abc/pytorch/x.csv#L3,\"a, b\",eager,ddp,squad,,synthetic,,o2\n"
          "vit_b_16,rtx3090,fp16,192,1,224,,max_batch,192,PyTorch 1.12,2022-06,https://x.org/y,,,,,nhwc,,256,\n",
      "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].num_gpus, 8);
  EXPECT_EQ(rows[0].seq_len, 384);
  EXPECT_EQ(rows[0].flash_attention, false);
  EXPECT_EQ(rows[0].task, "squad");
  EXPECT_TRUE(rows[0].pure_16bit);
  EXPECT_FALSE(rows[0].legacy());
  EXPECT_EQ(rows[1].metric, Metric::max_batch);
  EXPECT_EQ(rows[1].fails_at, 256);
  EXPECT_EQ(rows[1].channels_last, true);
  EXPECT_FALSE(rows[1].flash_attention.has_value());
}

// Found by fuzz/validate_csv: a second 'gpu' column (empty in the row) replaced the first one.
TEST(ParseMeasurements, AColumnNamedTwiceIsAnError) {
  EXPECT_EQ(parse_error("model,gpu,precision,batch_per_gpu,metric,value,gpu\nresnet50,rtx4090,fp16,64,max_batch,64,\n"),
            "t.csv:1: the header names the column 'gpu' twice");
}

TEST(ParseMeasurements, SoftwareBefore2021IsLegacy) {
  const auto rows = parse_measurements(std::string(kHeader) +
                                           "resnet50,v100-sxm2-16gb,fp16,256,1,224,,train_throughput,1200,MXNet 19.07,"
                                           "2019-07,https://x,,,,,,,,\n",
                                       "t.csv");
  EXPECT_TRUE(rows[0].legacy());
}

TEST(ParseMeasurements, SoftwareBeforeLazyModuleLoadingIsKnownFromItsDateOrVersions) {
  auto eager = [](const std::string& framework, const std::string& date) {
    Measurement m;
    m.framework = framework;
    m.software_date = date;
    return m.loads_modules_eagerly();
  };
  EXPECT_TRUE(eager("anything", "2022-10"));
  EXPECT_FALSE(eager("anything", "2022-11"));
  EXPECT_TRUE(eager("PyTorch 1.8.0a0+52ea372 (FlagPerf, NGC container build)", ""));
  EXPECT_TRUE(eager("PyTorch 1.13.0a0+936e930 (FlagPerf)", ""));  // a pre-release of 1.13
  EXPECT_FALSE(eager("PyTorch 1.13.1", ""));
  EXPECT_FALSE(eager("PyTorch 2.1", ""));
  EXPECT_TRUE(eager("PyTorch NGC (20.10 or 21.07)", ""));
  EXPECT_TRUE(eager("TensorFlow 21.02 NGC", ""));
  EXPECT_FALSE(eager("PyTorch NGC 24.03", ""));
  EXPECT_TRUE(eager("timm benchmark.py, CUDA 11.3", ""));
  EXPECT_FALSE(eager("", ""));  // unknown: today's software
}

TEST(ParseMeasurements, MemoryUnderAnotherFrameworkIsItsOwnGroup) {
  auto other = [](const std::string& framework) {
    Measurement m;
    m.framework = framework;
    return m.other_framework();
  };
  EXPECT_TRUE(other("TensorFlow 21.02 NGC"));
  EXPECT_TRUE(other("MXNet 22.10 NGC"));
  EXPECT_TRUE(other("PaddlePaddle 23.12 NGC"));
  EXPECT_TRUE(other("tf2.0"));                   // MLPerf's short form
  EXPECT_TRUE(other("llm.q (IST-DASLab/llmq `train`: CUDA/C++)"));
  EXPECT_FALSE(other("NVIDIA PyTorch/MxNet"));  // MLPerf's PyTorch submission
  EXPECT_FALSE(other("Megatron-Core 0.6 + TransformerEngine"));
  EXPECT_FALSE(other(""));
}

TEST(ParseMeasurements, BadValuesNameTheLineAndTheColumn) {
  auto error_of = [](const std::string& row) { return parse_error(std::string(kHeader) + row); };
  EXPECT_THAT(error_of("resnet50,rtx4090,fp16,64,1,224,,train_throughput,1000,,2024/04,,,,,,,,,\n"),
              HasSubstr("t.csv:2: software_date '2024/04' is not YYYY-MM"));
  EXPECT_THAT(error_of("resnet50,rtx4090,fp16,64,1,224,,max_batch,64,,,,,,,,,,32,\n"),
              HasSubstr("t.csv:2: fails_at 32 is not above the batch that ran (64)"));
  EXPECT_THAT(error_of(",rtx4090,fp16,64,1,224,,max_batch,64,,,,,,,,,,,\n"), HasSubstr("t.csv:2: 'model' is empty"));
  EXPECT_THAT(error_of("resnet50,rtx4090,fp16,64,1,224,,speed,64,,,,,,,,,,,\n"),
              HasSubstr("t.csv:2: metric 'speed' is not one of train_throughput, peak_memory, max_batch"));
  EXPECT_THAT(error_of("resnet50,rtx4090,fp16,6.5,1,224,,train_throughput,64,,,,,,,,,,,\n"),
              HasSubstr("'batch_per_gpu' = '6.5' is not a whole number"));
  EXPECT_THAT(error_of("resnet50,rtx4090,fp16,64,1,224,,train_throughput,64,,,,,,,,,,,o3\n"),
              HasSubstr("amp 'o3' is not one of autocast, o2"));
}

// The offload column is held to plan's --offload rule (offload_allowed): parameter offload needs FSDP or
// HSDP.
TEST(ParseMeasurements, OffloadParamsNeedsAParallelThatShardsTheWeights) {
  const std::string head = "model,gpu,precision,batch_per_gpu,num_gpus,metric,value,parallel,offload\n";
  const std::string row = "llama3-8b,h100-sxm5-80gb,bf16,4,8,train_throughput,10,";
  EXPECT_EQ(parse_error(head + row + "ddp,params\n"), "t.csv:2: offload params needs parallel fsdp or hsdp");
  EXPECT_EQ(parse_error(head + row + "hsdp,params+activations\n"), "");
  EXPECT_EQ(parse_error(head + row + "zero2,optimizer\n"), "");
}

// Unpadded or length-binned data and gradient accumulation are columns of their own.
TEST(ParseMeasurements, TokensAndAccumulationAreRead) {
  const auto rows = parse_measurements(
      "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,tokens,accumulation\n"
      "bert-large,a100-sxm4-80gb,fp16,48,8,512,train_throughput,260,256,2\n"
      "bert-large,a100-sxm4-80gb,fp16,48,8,512,train_throughput,130,,\n",
      "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokens, 256);
  EXPECT_EQ(rows[0].accumulation, 2);
  EXPECT_FALSE(rows[1].tokens.has_value());
  EXPECT_EQ(rows[1].accumulation, 1);
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,seq_len,metric,value,tokens\n"
                          "bert-large,a100-sxm4-80gb,fp16,48,128,train_throughput,260,256\n"),
              HasSubstr("t.csv:2: tokens 256 needs a seq_len at least as long"));
}

// Checkpointing and the memory of a variant card are columns of their own.
TEST(ParseMeasurements, CheckpointingAndAVariantCardsMemoryAreRead) {
  const auto rows = parse_measurements(
      "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,parallel,checkpointing,gpu_memory_gb\n"
      "llama3-8b,h100-sxm5-80gb,bf16,2,8,8192,train_throughput,0.7,fsdp,selective,96\n"
      "llama3-8b,h100-sxm5-80gb,fp8,1,8,32768,train_throughput,0.12,fsdp,full,\n"
      "llama2-13b,a100-sxm4-80gb,bf16,2,64,4096,train_throughput,0.53,fsdp,,\n",
      "t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].checkpointing, "selective");
  EXPECT_EQ(rows[0].gpu_memory_gb, 96.0);
  EXPECT_EQ(rows[1].checkpointing, "full");
  EXPECT_FALSE(rows[1].gpu_memory_gb.has_value());
  EXPECT_EQ(rows[2].checkpointing, "");
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,checkpointing\n"
                          "llama3-8b,h100-sxm5-80gb,bf16,2,train_throughput,0.7,some\n"),
              HasSubstr("t.csv:2: checkpointing 'some' is not one of none, full, selective"));
}

// The fine-tuning recipe columns are plan's options; fine-tuning rows are never fitted.
TEST(ParseMeasurements, TheFineTuningRecipeColumnsAreRead) {
  const auto rows = parse_measurements(
      "model,gpu,precision,batch_per_gpu,seq_len,metric,value,task,optimizer,master_weights,loss,lora_rank,qlora,"
      "lora_targets,optimizer_in_backward,checkpointing,kernels,clip_grad_norm,optimizer_impl\n"
      "llama3.1-8b,rtx4090,bf16,2,2048,peak_reserved,7.9e9,finetune,adamw,bf16,chunked,8,yes,mlp,,every:2,fused,,\n"
      "llama3.1-8b,rtx4090,bf16,2,2048,train_throughput,0.8,finetune,paged_adamw8bit,bf16,plain16,,,,yes,,,yes,loop\n",
      "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].metric, Metric::peak_reserved);
  EXPECT_EQ(rows[0].optimizer, Optimizer::adamw);
  EXPECT_EQ(rows[0].master_weights, MasterWeights::bf16);
  EXPECT_EQ(rows[0].loss, LossImpl::chunked);
  EXPECT_EQ(rows[0].lora_rank, 8);
  EXPECT_TRUE(rows[0].qlora);
  EXPECT_EQ(rows[0].lora_targets, LoraTargets::mlp);
  EXPECT_EQ(rows[0].checkpointing, "every:2");
  EXPECT_STREQ(rows[0].method(), "qlora");
  EXPECT_TRUE(rows[0].fused_kernels);
  EXPECT_FALSE(rows[1].fused_kernels);  // empty: Hugging Face's eager code, plan's default
  EXPECT_EQ(rows[1].loss, LossImpl::plain16);
  EXPECT_TRUE(rows[1].optimizer_in_backward);
  EXPECT_FALSE(rows[0].clip_grad_norm);  // empty: no clipping, plan's default
  EXPECT_TRUE(rows[1].clip_grad_norm);
  EXPECT_FALSE(rows[0].optimizer_impl);  // empty: the software's default (validate_rows.cpp)
  EXPECT_EQ(rows[1].optimizer_impl, OptimizerImpl::loop);
  EXPECT_STREQ(rows[1].method(), "full");
  EXPECT_TRUE(rows[1].fine_tuning());
  EXPECT_FALSE(rows[1].current_throughput());
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,optimizer\n"
                          "gpt2,rtx4090,bf16,2,train_throughput,0.7,adam8bit\n"),
              HasSubstr("t.csv:2: optimizer 'adam8bit' is not one of sgd|momentum|adam|adamw|adamw8bit"));
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,kernels\n"
                          "gpt2,rtx4090,bf16,2,train_throughput,0.7,compiled\n"),
              HasSubstr("t.csv:2: kernels 'compiled' is not one of"));
  EXPECT_TRUE(rows[0].kbit_upcast);  // empty: prepared, the Hugging Face path
  EXPECT_FALSE(parse_measurements("model,gpu,precision,batch_per_gpu,metric,value,qlora,kbit_upcast\n"
                                  "llama2-7b,a100-sxm4-80gb,fp16,4,train_throughput,15,yes,no\n",
                                  "t.csv")[0]
                   .kbit_upcast);
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,kbit_upcast\n"
                          "llama2-7b,a100-sxm4-80gb,fp16,4,train_throughput,15,no\n"),
              HasSubstr("t.csv:2: kbit_upcast 'no' needs qlora yes"));
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,optimizer_impl\n"
                          "gpt2,rtx4090,bf16,2,train_throughput,0.7,apex\n"),
              HasSubstr("t.csv:2: optimizer_impl 'apex' is not one of fused, foreach, loop"));
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,clip_grad_norm\n"
                          "gpt2,rtx4090,bf16,2,train_throughput,0.7,1.0\n"),
              HasSubstr("t.csv:2: clip_grad_norm '1.0' is not one of"));
  EXPECT_THAT(parse_error("model,gpu,precision,batch_per_gpu,metric,value,checkpointing\n"
                          "gpt2,rtx4090,bf16,2,train_throughput,0.7,every:0\n"),
              HasSubstr("t.csv:2: checkpointing 'every:0' is not every:N with N from 1 to 9999"));
}

// A data-parallel row more than 10% faster per GPU than the same source's single-GPU run of the same
// configuration is its own group; within the tolerance, or against another framework release, it is not.
TEST(ParseMeasurements, DataParallelRowsFasterPerGpuThanOneGpuAreSuperlinear) {
  const std::string head = "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,framework,source,task\n";
  const std::string src = ",PyTorch 24.03 NGC,https://github.com/lambdal/deeplearning-benchmark/blob/x/a.csv,squad\n";
  const auto rows = parse_measurements(head + "bert-base,h100-sxm5-80gb,fp16,320,1,384,train_throughput,850" + src +
                                           "bert-base,h100-sxm5-80gb,fp16,320,8,384,train_throughput,1150" + src +
                                           "bert-base,h100-sxm5-80gb,fp16,320,4,384,train_throughput,930" + src +
                                           "bert-base,h100-sxm5-80gb,fp16,320,8,384,train_throughput,1150,PyTorch "
                                           "22.09 NGC,https://github.com/lambdal/deeplearning-benchmark/blob/x/a.csv,"
                                           "squad\n",
                                       "t.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(rows[0].superlinear);
  EXPECT_TRUE(rows[1].superlinear);   // 1150 > 850 x 1.1
  EXPECT_FALSE(rows[2].superlinear);  // 930 < 935
  EXPECT_FALSE(rows[3].superlinear);  // no single-GPU row of that release
}

TEST(CvGroups, ASourceIsItsRepositoryOrItsSite) {
  Measurement m;
  m.source = "https://github.com/lambdal/deeplearning-benchmark/blob/0551cb7/pytorch/a.csv#L3";
  EXPECT_EQ(cv_group_of(m, CvGroup::source), "github.com/lambdal/deeplearning-benchmark");
  m.source = "https://www.example.com/blog/post#table";
  EXPECT_EQ(cv_group_of(m, CvGroup::source), "example.com");
  m.gpu = "rtx3090";
  m.model = "vit_b_16";
  EXPECT_EQ(cv_group_of(m, CvGroup::gpu), "rtx3090");
  EXPECT_EQ(cv_group_of(m, CvGroup::model), "vit_b_16");
}

TEST(ModelFamily, IsTheIdsLeadingWord) {
  EXPECT_EQ(model_family("resnet50"), "resnet");
  EXPECT_EQ(model_family("bert-large"), "bert");
  EXPECT_EQ(model_family("vit_b_16"), "vit");
  EXPECT_EQ(model_family("gpt2-xl"), "gpt2");
  EXPECT_EQ(model_family("llama3-8b"), "llama");
}

TEST(Summarize, GivesAbsoluteSignedAndRatioQuantiles) {
  const ErrorSummary s = summarize({-0.2, -0.1, 0.0, 0.1, 0.3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median_abs_error, 0.1);
  EXPECT_DOUBLE_EQ(s.median_error, 0.0);
  EXPECT_NEAR(s.ratio_p10, 0.84, 1e-12);  // 1 + quantile(-0.2, -0.1, 0, 0.1, 0.3; 0.1)
  EXPECT_NEAR(s.ratio_p90, 1.22, 1e-12);
}

// A row's prediction inputs are what its prediction is made from, so the fit predicts rows that share them
// once: rows that differ only in what they measured, where it was published or how the card was spelt share
// them; a batch, a sequence length or the tokens computed set a row apart.

TEST(PrepareRows, RowsShareTheirPredictionInputsExactlyWhenTheyPredictAlike) {
  const auto rows = parse_measurements(
      "model,gpu,precision,batch_per_gpu,seq_len,tokens,metric,value,source\n"
      "gpt2,rtx4090,fp16,8,1024,,train_throughput,100,https://a.org/x\n"
      "gpt2,RTX 4090,fp16,8,1024,,train_throughput,120,https://b.org/y\n"
      "gpt2,rtx4090,fp16,16,1024,,train_throughput,100,https://a.org/x\n"
      "gpt2,rtx4090,fp16,8,512,,train_throughput,100,https://a.org/x\n"
      "gpt2,rtx4090,fp16,8,1024,512,train_throughput,100,https://a.org/x\n",
      "t.csv");
  std::vector<detail::PredictionInputs> inputs;
  for (const Measurement& m : rows) {
    std::string skipped;
    const auto prepared = detail::prepare(m, catalog::Catalog::active(), skipped);
    ASSERT_TRUE(prepared) << skipped;
    inputs.push_back(prepared->inputs);
  }
  EXPECT_TRUE(inputs[0] == inputs[1]);
  for (std::size_t i = 2; i < inputs.size(); ++i) EXPECT_FALSE(inputs[0] == inputs[i]) << "row " << i + 2;
}

// An empty optimizer_impl takes the software's default: the framework's own fused step outside PyTorch, torch.optim's
// foreach from PyTorch 2.0 (2023-03), its loop before; a stated one is kept. kbit_upcast reaches the config.
TEST(PrepareRows, AnEmptyOptimizerImplementationIsTheSoftwaresDefault) {
  const std::vector<TrainingConfig> configs = prepared_configs(
      "model,gpu,precision,batch_per_gpu,seq_len,metric,value,framework,software_date,optimizer_impl,qlora,kbit_upcast\n"
      "gpt2,rtx4090,fp16,8,1024,train_throughput,100,PyTorch 2.1,2023-10,,,\n"
      "gpt2,rtx4090,fp16,8,1024,train_throughput,100,PyTorch 1.12,2022-06,,,\n"
      "bert-large,v100-sxm2-32gb,fp16,8,384,train_throughput,100,TensorFlow 1.15,2020-06,,,\n"
      "gpt2,rtx4090,fp16,8,1024,train_throughput,100,PyTorch 2.1,2023-10,fused,,\n"
      "llama2-7b,a100-sxm4-80gb,fp16,4,256,train_throughput,15,PyTorch 2.1,2023-12,,yes,no\n");
  ASSERT_EQ(configs.size(), 5u);
  EXPECT_EQ(configs[0].optimizer_impl, OptimizerImpl::foreach);
  EXPECT_EQ(configs[1].optimizer_impl, OptimizerImpl::loop);
  EXPECT_EQ(configs[2].optimizer_impl, OptimizerImpl::fused);
  EXPECT_EQ(configs[3].optimizer_impl, OptimizerImpl::fused);
  EXPECT_TRUE(configs[0].kbit_upcast);
  EXPECT_FALSE(configs[4].kbit_upcast);
}

// gpus_per_node spreads a row's GPUs over the nodes its system had (one DGX-2 of 16, two servers of 4); empty, a
// node holds up to 8. A count that does not divide the GPUs into whole nodes is an error naming both.
TEST(PrepareRows, GpusPerNodeSetsTheNodesARowRanOn) {
  const std::vector<TrainingConfig> configs = prepared_configs(
      "model,gpu,precision,batch_per_gpu,num_gpus,metric,value,gpus_per_node\n"
      "bert-large,v100-sxm2-32gb,fp16,8,16,train_throughput,100,16\n"
      "bert-large,a100-sxm4-80gb,fp16,8,8,train_throughput,100,4\n"
      "bert-large,v100-sxm2-32gb,fp16,8,16,train_throughput,100,\n");
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0].gpus_per_node, 16);
  EXPECT_EQ(configs[0].nodes, 1);
  EXPECT_EQ(configs[1].gpus_per_node, 4);
  EXPECT_EQ(configs[1].nodes, 2);
  EXPECT_EQ(configs[2].gpus_per_node, 8);
  EXPECT_EQ(configs[2].nodes, 2);
  EXPECT_EQ(parse_error("model,gpu,precision,batch_per_gpu,num_gpus,metric,value,gpus_per_node\n"
                        "bert-large,a100-sxm4-80gb,fp16,8,10,train_throughput,100,4\n"),
            "t.csv:2: gpus_per_node 4 does not divide num_gpus 10 into whole nodes");
}

// The speed constants are fitted to current-software throughput rows on one node: a run across nodes also waits on a
// network no fitted constant stands for, and fine-tuning rows are always held out.
TEST(PrepareRows, TheSpeedFitTakesRowsOnOneNodeOnly) {
  const auto rows = parse_measurements(
      "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,task\n"
      "gpt2,a100-sxm4-80gb,bf16,8,1,1024,train_throughput,100,\n"
      "gpt2,a100-sxm4-80gb,bf16,8,8,1024,train_throughput,90,\n"
      "gpt2,a100-sxm4-80gb,bf16,8,64,1024,train_throughput,80,\n"
      "gpt2,a100-sxm4-80gb,bf16,8,1,1024,train_throughput,100,finetune\n",
      "t.csv");
  const std::vector<detail::Prepared> prepared = prepare_all(rows);
  ASSERT_EQ(prepared.size(), rows.size());
  std::vector<bool> fitted;
  for (std::size_t i = 0; i < rows.size(); ++i) fitted.push_back(detail::fits_speed(rows[i], prepared[i]));
  EXPECT_EQ(fitted, (std::vector<bool>{true, true, false, false}));
}

// Every throughput headline comes for all cards and for the data-center and GeForce cards apart, and a
// GeForce card's cell is its own beside the data-center cards of the same architecture.
TEST(Validate, SplitsTheHeadlinesAndCellsByCards) {
  const auto rows = parse_measurements(std::string(kHeader) +
                                           "resnet50,rtx3090,fp16,256,1,224,,train_throughput,900,PyTorch 2.1,2023-10,s\n"
                                           "resnet50,rtx4090,fp16,256,1,224,,train_throughput,1300,PyTorch 2.1,2023-10,s\n"
                                           "resnet50,a100-sxm4-80gb,fp16,256,1,224,,train_throughput,2400,PyTorch 2.1,2023-10,s\n"
                                           "resnet50,rtx3090,fp16,256,2,224,,train_throughput,850,PyTorch 2.1,2023-10,s\n",
                                       "t.csv");
  const ValidationReport r = validate(rows, catalog::Catalog::active(), Calibration{});
  EXPECT_EQ(r.single_gpu_by_cards.all.count, 3);
  EXPECT_EQ(r.single_gpu_by_cards.geforce.count, 2);
  EXPECT_EQ(r.single_gpu_by_cards.data_center.count, 1);
  EXPECT_DOUBLE_EQ(r.single_gpu_by_cards.all.median_abs_error, r.single_gpu_throughput.median_abs_error);
  EXPECT_EQ(r.multi_gpu_by_cards.geforce.count, 1);
  EXPECT_EQ(r.multi_gpu_by_cards.data_center.count, 0);
  ASSERT_EQ(r.architectures.size(), 2u);  // Ada Lovelace, Ampere
  EXPECT_EQ(r.architectures[1].architecture, "Ampere");
  EXPECT_EQ(r.architectures[1].throughput.all.count, 2);
  EXPECT_EQ(r.architectures[1].throughput.geforce.count, 1);
  EXPECT_EQ(r.architectures[1].throughput.data_center.count, 1);
  int ampere_cells = 0;
  for (const CellSummary& c : r.cells) {
    if (c.cell.architecture != "Ampere") continue;
    ++ampere_cells;
    EXPECT_EQ(c.throughput.count, 1);
  }
  EXPECT_EQ(ampere_cells, 2);  // the RTX 3090's GeForce cell and the A100's data-center cell
}

IntervalTable toy_table() {
  IntervalTable t;
  t.method = "leave-one-gpu-out";
  t.cells = {{"resnet", "fp16", "Ampere", 10, 0.8, 1.25, 0.1},
             {"resnet", "fp16", "Hopper", 3, 0.5, 2.0, 0.4},
             {"resnet", "fp16", "*", 13, 0.9, 1.1, 0.1},
             {"resnet", "*", "*", 13, 0.9, 1.1, 0.1},
             {"*", "fp16", "*", 13, 0.9, 1.1, 0.1},
             {"*", "*", "*", 13, 0.9, 1.1, 0.1}};
  t.multi_gpu = {"*", "*", "*", 6, 0.5, 1.0, 0.2};
  t.max_validated_gpus = 8;
  return t;
}

TEST(ThroughputInterval, TakesTheCellsSpreadWhenItHasEnoughRows) {
  const Interval i = throughput_interval(toy_table(), 1000, "resnet", "fp16", "Ampere", 1);
  EXPECT_DOUBLE_EQ(i.low, 800);    // 1000 / 1.25
  EXPECT_DOUBLE_EQ(i.high, 1250);  // 1000 / 0.8
  EXPECT_THAT(i.basis, HasSubstr("resnet · fp16 · Ampere: 10 held-out runs"));
  EXPECT_TRUE(i.warnings.empty());
}

// A cell whose held-out runs all ran faster than predicted (or all slower) gives a range to one side of the
// prediction; it reaches to the prediction instead, so that no estimate prints outside its own range.
TEST(ThroughputInterval, ARangeToOneSideOfThePredictionIsStretchedToIt) {
  const Interval under = interval_from_cell({"resnet", "fp16", "Hopper", 56, 0.8, 0.9, 0.1}, 1000, "b");
  EXPECT_DOUBLE_EQ(under.low, 1000);         // not 1000 / 0.9 = 1,111
  EXPECT_DOUBLE_EQ(under.high, 1000 / 0.8);  // 1,250
  const Interval over = interval_from_cell({"vit", "fp16", "*", 167, 1.1, 1.25, 0.1}, 1000, "b");
  EXPECT_DOUBLE_EQ(over.low, 1000 / 1.25);  // 800
  EXPECT_DOUBLE_EQ(over.high, 1000);        // not 1000 / 1.1 = 909
}

TEST(ThroughputInterval, FallsBackToACoarserLevelBelowFiveRows) {
  const Interval i = throughput_interval(toy_table(), 1000, "resnet", "fp16", "Hopper", 1);
  EXPECT_NEAR(i.low, 1000 / 1.1, 1e-9);
  EXPECT_THAT(i.basis, HasSubstr("resnet · fp16 · any GPU"));
}

TEST(ThroughputInterval, WarnsOutsideTheValidatedRegion) {
  const Interval i = throughput_interval(toy_table(), 100, "llama", "fp8", "Blackwell", 16);
  EXPECT_THAT(i.basis, HasSubstr("data-parallel runs"));
  ASSERT_EQ(i.warnings.size(), 4u);
  EXPECT_THAT(i.warnings[0], HasSubstr("no validation run on a Blackwell GPU"));
  EXPECT_THAT(i.warnings[1], HasSubstr("no validation run at fp8"));
  EXPECT_THAT(i.warnings[2], HasSubstr("no validation run of a llama model"));
  EXPECT_THAT(i.warnings[3], HasSubstr("no validation run with 16 GPUs (the most is 8)"));
}

TEST(IntervalTable, RoundTripsThroughItsJson) {
  const IntervalTable t = toy_table();
  const IntervalTable back = parse_interval_table(interval_table_json(t, "published.csv"), "x.json");
  ASSERT_EQ(back.cells.size(), t.cells.size());
  EXPECT_EQ(back.cells[1].architecture, "Hopper");
  EXPECT_DOUBLE_EQ(back.cells[1].ratio_p90, 2.0);
  EXPECT_EQ(back.multi_gpu.rows, 6);
  EXPECT_THROW(parse_interval_table("{}", "x.json"), InputError);
}

TEST(IntervalTable, TheBuiltInTableComesFromCrossValidation) {
  const IntervalTable& t = builtin_interval_table();
  EXPECT_EQ(t.method, "leave-one-gpu-out");
  EXPECT_GT(t.cells.size(), 20u);
}

// validate's language-model rows by tokens per sample (issue 56): GPT-2's 1K, Llama 2's 4K, 16K, and beyond.
TEST(Validate, SequenceBandsSplitAtOneFourAndSixteenK) {
  EXPECT_EQ(sequence_band_name(512), "<=1024");
  EXPECT_EQ(sequence_band_name(1024), "<=1024");
  EXPECT_EQ(sequence_band_name(1025), "1025-4096");
  EXPECT_EQ(sequence_band_name(8192), "4097-16384");
  EXPECT_EQ(sequence_band_name(32768), ">16384");
}

}  // namespace
}  // namespace gpusage::estimate
