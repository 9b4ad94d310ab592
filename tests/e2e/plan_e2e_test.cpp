// End-to-end: gpusage plan, guide and validate as a user runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

TEST(PlanE2E, SeedTableShowsEveryRtx50CardAtEveryBatchWithWhatDoesNotFit) {
  auto r = run_cli("plan resnet50 --gpu rtx50 --batch 32,64,128,256 --precision fp16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"GeForce RTX 5090", "GeForce RTX 5080", "GeForce RTX 5070 Ti", "GeForce RTX 5070",
                           "GeForce RTX 5060 Ti 16 GB", "GeForce RTX 5060 Ti 8 GB", "GeForce RTX 5060",
                           "GeForce RTX 5050"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  for (const char* header : {"batch 32", "batch 64", "batch 128", "batch 256"}) {
    EXPECT_NE(r.out.find(header), std::string::npos) << header;
  }
  // 8 GB cards cannot hold ResNet-50 at batch 256 in mixed precision; 32 GB can.
  EXPECT_NE(r.out.find("OOM"), std::string::npos);
  EXPECT_NE(r.out.find("Ranking"), std::string::npos);
}

TEST(PlanE2E, Bf16OnACardWithoutItIsRefusedWithTheFixWhenItIsTheOnlyCard) {
  auto r = run_cli("plan resnet50 --gpu rtx2080ti --batch 64 --precision bf16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--precision bf16: the GeForce RTX 2080 Ti (rtx2080ti, compute capability 7.5) has no "
                       "bfloat16"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("use --precision fp16"), std::string::npos) << r.err;
}

TEST(PlanE2E, Bf16AmongSeveralCardsLeavesOutThoseWithoutItAndSaysWhich) {
  auto r = run_cli("plan resnet50 --gpu rtx2080ti,rtx3090,t4 --batch 64 --precision bf16 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["gpu"], "rtx3090");
  bool said = false;
  for (const auto& note : doc["notes"]) {
    const std::string text = note.get<std::string>();
    said = said || (text.find("Left out for --precision bf16") != std::string::npos &&
                    text.find("rtx2080ti, t4") != std::string::npos);
  }
  EXPECT_TRUE(said) << doc["notes"].dump();
}

TEST(PlanE2E, JsonFollowsTheContract) {
  auto r = run_cli("plan resnet50 --gpu rtx5090,rtx5060 --batch 64,256 --precision fp16 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["model"]["id"], "resnet50");
  EXPECT_EQ(doc["model"]["params"], 25557032);
  ASSERT_EQ(doc["results"].size(), 4u);
  for (const auto& row : doc["results"]) {
    for (const char* key : {"gpu", "batch", "precision", "fits", "memory", "capacity_bytes", "max_batch", "step_time_s",
                            "throughput", "tokens_per_s", "accumulation_steps", "epoch_time_s",
                            "energy_wh_per_epoch", "bound", "advice"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    for (const char* key : {"weights", "gradients", "optimizer", "activations", "workspace", "context", "total"}) {
      EXPECT_TRUE(row["memory"].contains(key)) << key;
    }
    EXPECT_TRUE(row["tokens_per_s"].is_null());  // a vision model
    EXPECT_EQ(row["precision"], "fp16");
    // fp32 master weights + momentum + gradients: 12 bytes per parameter.
    EXPECT_DOUBLE_EQ(row["memory"]["weights"].get<double>() + row["memory"]["gradients"].get<double>() +
                         row["memory"]["optimizer"].get<double>(),
                     12.0 * 25557032);
    // Epoch over ImageNet-1k's 1,281,167 images at the predicted throughput.
    EXPECT_NEAR(row["epoch_time_s"].get<double>(), 1281167.0 / row["throughput"].get<double>(), 1e-6);
  }
  EXPECT_EQ(doc["results"][0]["gpu"], "rtx5090");
  EXPECT_EQ(doc["results"][0]["fits"], true);
  EXPECT_EQ(doc["results"][3]["gpu"], "rtx5060");
  EXPECT_EQ(doc["results"][3]["fits"], false);  // 8 GB at batch 256
  // More memory, same model: the 5090's largest batch is larger.
  EXPECT_GT(doc["results"][0]["max_batch"].get<int>(), doc["results"][3]["max_batch"].get<int>());
}

TEST(PlanE2E, AutoBatchPicksTheLargestThatFits) {
  auto r = run_cli("plan resnet50 --gpu rtx5090 --batch auto --precision bf16 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto row = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_EQ(row["batch"], row["max_batch"]);
  EXPECT_TRUE(row["fits"].get<bool>());
  EXPECT_LE(row["memory"]["total"].get<double>(), row["capacity_bytes"].get<double>());
}

TEST(PlanE2E, TargetBatchGivesAccumulationSteps) {
  auto r = run_cli("plan gpt2 --gpu rtx5070 --target-batch 512 --precision bf16 --seq-len 1024 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto row = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_GT(row["accumulation_steps"].get<int>(), 1);
  EXPECT_EQ(row["effective_batch"].get<int>(), 512);
  EXPECT_EQ(row["batch"].get<int>() * row["accumulation_steps"].get<int>(), 512);
  EXPECT_TRUE(row["fits"].get<bool>());
  EXPECT_FALSE(row["tokens_per_s"].is_null());
}

TEST(PlanE2E, AdviceWhenAModelDoesNotFit) {
  auto r = run_cli("plan llama3-8b --gpu rtx5090 --batch 1 --seq-len 2048 --precision bf16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("does not fit"), std::string::npos);
  EXPECT_NE(r.out.find("--qlora"), std::string::npos);
  EXPECT_NE(r.out.find("--parallel fsdp"), std::string::npos);
}

// Several cards: each card on which not even batch 1 fits gets its first remedy; a card that fits gets none.
TEST(PlanE2E, EachCardThatCannotFitGetsItsFirstRemedy) {
  auto r = run_cli("plan llama3-8b --qlora --seq-len 8192 --gpu rtx5090,rtx4090,h100-sxm5-80gb");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto advice = r.out.find("\nAdvice (cards on which nothing fits");
  ASSERT_NE(advice, std::string::npos) << r.out;
  const std::string section = r.out.substr(advice, r.out.find("\n\n", advice + 1) - advice);
  EXPECT_NE(section.find("GeForce RTX 5090: does not fit at batch 1; activation checkpointing (--checkpointing)"),
            std::string::npos) << section;
  EXPECT_NE(section.find("GeForce RTX 4090: does not fit at batch 1;"), std::string::npos) << section;
  EXPECT_EQ(section.find("H100"), std::string::npos) << section;
}

TEST(PlanE2E, QloraFitsALlamaOnOneCard) {
  auto r = run_cli("plan llama3-8b --gpu rtx5090 --qlora --seq-len 1024 --batch 1 --precision bf16 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["results"][0]["fits"].get<bool>());
}

TEST(PlanE2E, HuggingFaceConfigBuildsTheModel) {
  const std::string config = std::string(GPUSAGE_BINARY_DIR) + "/e2e-llama-config.json";
  std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
    "max_position_embeddings": 4096, "tie_word_embeddings": false, "rms_norm_eps": 1e-5})";
  auto r = run_cli("plan --hf-config " + config + " --gpu h100-sxm5-80gb --batch 1 --seq-len 512 --format json");
  std::remove(config.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["params"], 6738415616LL);
}

TEST(PlanE2E, BadInputIsOneLineAndExitTwo) {
  for (const char* args : {"plan resnet51 --gpu rtx5090", "plan resnet50 --gpu rtx9999", "plan resnet50 --batch 0",
                           "plan resnet50 --batch 32,x", "plan resnet50 --precision fp64", "plan resnet50 --gpu h100",
                           "plan"}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  auto r = run_cli("plan resnet51");
  EXPECT_NE(r.err.find("resnet50"), std::string::npos) << r.err;  // did-you-mean
}

TEST(PlanE2E, CalibrationFromBenchResultsScalesThatGpusStepTime) {
  const std::string results = std::string(GPUSAGE_SOURCE_DIR) + "/tests/unit/bench/fixtures/cuda-run.json";
  auto plain = nlohmann::json::parse(run_cli("plan resnet50 --gpu rtx4090,rtx5090 --batch 32 --format json").out);
  auto r = run_cli("plan resnet50 --gpu rtx4090,rtx5090 --batch 32 --format json --calibration " + results);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto calibrated = nlohmann::json::parse(r.out);
  ASSERT_EQ(calibrated["notes"].size(), 1u);
  const std::string note = calibrated["notes"][0];
  EXPECT_NE(note.find("rtx4090: step time x"), std::string::npos) << note;
  const double scale = std::stod(note.substr(note.find(" x") + 2));
  // The measured card is rescaled (to the note's 3 decimals); the other card is untouched.
  EXPECT_NEAR(calibrated["results"][0]["step_time_s"].get<double>() / plain["results"][0]["step_time_s"].get<double>(),
              scale, 0.001);
  EXPECT_DOUBLE_EQ(calibrated["results"][1]["step_time_s"].get<double>(),
                   plain["results"][1]["step_time_s"].get<double>());
}

TEST(GuideE2E, PrintsSpecsAndEstimateAndWritesTheChart) {
  const std::string chart = std::string(GPUSAGE_BINARY_DIR) + "/e2e-guide.svg";
  std::filesystem::remove(chart);
  auto r = run_cli("guide --chart " + chart);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Which GPU?"), std::string::npos);
  EXPECT_NE(r.out.find("ResNet-50"), std::string::npos);
  const std::string svg = read_text(chart);
  EXPECT_TRUE(svg.starts_with("<svg") || svg.starts_with("<?xml")) << svg.substr(0, 40);
  EXPECT_NE(svg.find("ResNet-50 bf16 (predicted, best batch)"), std::string::npos);
  std::filesystem::remove(chart);
}

// The honest figure: every published run predicted by constants fitted without its GPU. The bounds are
// the figures measured when the model and data last changed (docs/MODEL.md), with a little room, so a
// change that makes out-of-sample accuracy worse fails here. Measured (session 14, after the SMs' share of
// memory-bound time): median 6.4%, p90 22.2% on 1,068 rows, multi-GPU 11.0% on 1,243 rows (the 75 superlinear
// data-parallel rows their own group), every fold fitted from the documented priors; PyTorch memory, with the
// allocator's unreleasable share refitted per fold as well: peak 8.3%, 53 of 59 brackets, 29 of 3,781 runs that
// ran (0.8%) predicted not to fit. The issue's targets: median 10% (issue 28: 7%), p90 25% (issue 28: 23%),
// multi-GPU 15%, peak 10%, 85% of brackets, 2% wrongly not fitting. Before session 14 the record gave 6.6% /
// 25.9%, and a change of under 0.1% in the language rows' predictions moved that by a point (docs/MODEL.md,
// session 14); the bounds keep about half a point of room over today's stable figures.
TEST(ValidateE2E, LeaveOneGpuOutAccuracyOnThePublishedRecord) {
  const std::string intervals = std::string(GPUSAGE_BINARY_DIR) + "/e2e-intervals.json";
  auto r = run_cli("validate " + std::string(GPUSAGE_SOURCE_DIR) +
                   "/data/validation/published.csv --cv gpu --format json --intervals-out " + intervals);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["cv"], "gpu");
  EXPECT_GE(doc["groups"].get<int>(), 25);
  const auto& single = doc["summary"]["single_gpu_throughput"];
  EXPECT_GE(single["rows"].get<int>(), 900);
  EXPECT_LE(single["median_abs_error"].get<double>(), 0.07);
  EXPECT_LE(single["p90_abs_error"].get<double>(), 0.23);
  const auto& multi = doc["summary"]["multi_gpu_throughput"];
  EXPECT_GE(multi["rows"].get<int>(), 1000);
  EXPECT_LE(multi["median_abs_error"].get<double>(), 0.15);
  // Data-parallel rows faster per GPU than one GPU are reported beside the headline, not dropped.
  EXPECT_GE(doc["summary"]["superlinear_throughput"]["rows"].get<int>(), 50);
  EXPECT_GE(doc["summary"]["peak_memory"]["rows"].get<int>() + doc["summary"]["legacy_peak_memory"]["rows"].get<int>(),
            400);
  EXPECT_LE(doc["summary"]["peak_memory"]["median_abs_error"].get<double>(), 0.095);
  const auto& brackets = doc["summary"]["max_batch"];
  EXPECT_GE(brackets["rows"].get<int>(), 55);
  EXPECT_GE(brackets["in_bracket"].get<double>() / brackets["rows"].get<double>(), 0.87);
  const auto& ran = doc["summary"]["runs_that_ran"];
  EXPECT_GE(ran["rows"].get<int>(), 3000);
  EXPECT_LE(ran["predicted_oom"].get<double>() / ran["rows"].get<double>(), 0.01);
  // Memory measured under another framework is reported beside, not dropped.
  const auto& other = doc["summary"]["other_framework_memory"];
  // 76 brackets, and LitGPT's two fine-tuning brackets (issue 27).
  EXPECT_EQ(other["max_batch"]["rows"].get<int>() + brackets["rows"].get<int>(), 78);
  EXPECT_GE(other["runs_that_ran"]["rows"].get<int>(), 600);
  // Every row names a zoo model, and a row is skipped only for a GPU the catalog lacks.
  for (const auto& row : doc["rows"]) {
    if (row["skipped"].is_null()) continue;
    EXPECT_NE(row["skipped"].get<std::string>().find("GPU"), std::string::npos) << row.dump();
  }
  // The interval table plan ships is the one this cross-validation produces (not stale).
  auto fresh = nlohmann::json::parse(read_text(intervals));
  auto shipped = nlohmann::json::parse(read_text(std::string(GPUSAGE_SOURCE_DIR) + "/data/validation/intervals.json"));
  ASSERT_EQ(fresh["cells"].size(), shipped["cells"].size());
  for (std::size_t i = 0; i < fresh["cells"].size(); ++i) {
    EXPECT_EQ(fresh["cells"][i]["rows"], shipped["cells"][i]["rows"]) << i;
    EXPECT_NEAR(fresh["cells"][i]["ratio_p90"].get<double>(), shipped["cells"][i]["ratio_p90"].get<double>(), 1e-9);
    EXPECT_NEAR(fresh["cells"][i]["ratio_p10"].get<double>(), shipped["cells"][i]["ratio_p10"].get<double>(), 1e-9);
  }
  std::filesystem::remove(intervals);
}

// --fit stays physical: efficiencies in (0, 1], architecture factors in [0.5, 2] and never lifting a
// tensor-core GEMM efficiency above 1; it prints which constants moved.
TEST(ValidateE2E, FittedConstantsStayInsideTheirPhysicalBounds) {
  auto r = run_cli("validate " + std::string(GPUSAGE_SOURCE_DIR) + "/data/validation/published.csv --fit --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& k = doc["constants"];
  for (const char* name : {"conv_tensor_efficiency", "matmul_tensor_efficiency", "conv_fp32_efficiency",
                           "matmul_fp32_efficiency", "tf32_relative_efficiency", "attention_relative_efficiency",
                           "memory_efficiency", "depthwise_conv_relative_efficiency"}) {
    const double v = k[name].get<double>();
    EXPECT_GE(v, 0.0) << name;
    EXPECT_LE(v, 1.0) << name;
    if (std::string(name).find("_relative") == std::string::npos && std::string(name) != "memory_efficiency") {
      EXPECT_GT(v, 0.0) << name;
    }
  }
  EXPECT_FALSE(k.contains("architecture_compute_factor"));  // one set of constants for every card
  // Constants the rows cannot identify keep their documented values: the fit does not move them.
  for (const char* name : {"power_headroom", "gemm_tile_fixed_cycles", "nchw_transpose_passes"}) {
    EXPECT_FALSE(k.contains(name)) << name;
  }
  // The allocator's unreleasable fragmentation is a part of its reserve (8% of activations + workspace).
  EXPECT_GE(k["allocator_unreleasable_fraction"].get<double>(), 0.0);
  EXPECT_LE(k["allocator_unreleasable_fraction"].get<double>(), 0.08);
  EXPECT_TRUE(doc["changes"].is_array());
}

// A run that ran at the card's edge: Lambda's BERT-large SQuAD, TF32, 64 per GPU on eight 80 GB H100s. With
// the whole allocator reserve counted it does not fit (the fit, which keeps the largest of equal shares,
// would keep 0.08); the allocator gives its cache back before it fails, and --fit finds the largest
// unreleasable share with which the run fits.
TEST(ValidateE2E, TheFitFindsHowMuchOfTheReserveTheAllocatorGivesBack) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate-edge.csv";
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,num_gpus,seq_len,metric,value,software_date,attention,task\n"
                        "bert-large,h100-sxm5-80gb,tf32,64,8,384,train_throughput,60,2022-09,eager,squad\n";
  auto r = run_cli("validate " + csv + " --fit --format json");
  std::remove(csv.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const double fraction = doc["constants"]["allocator_unreleasable_fraction"].get<double>();
  EXPECT_LT(fraction, 0.08);
  EXPECT_GT(fraction, 0.06);  // the largest share with which it fits (about 0.075), not the smallest
  EXPECT_EQ(doc["summary"]["runs_that_ran"]["predicted_oom"], 0);
}

TEST(ValidateE2E, MaxBatchBracketsAndLegacyRowsAreTheirOwnGroups) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate-bracket.csv";
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,metric,value,fails_at,software_date\n"
                        "resnet50,rtx4090,fp16,1,max_batch,1,100000,2024-04\n"
                        "resnet50,rtx4090,fp16,64,train_throughput,1000,,2019-07\n";
  auto r = run_cli("validate " + csv + " --format json");
  std::remove(csv.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["summary"]["max_batch"]["rows"], 1);
  EXPECT_EQ(doc["summary"]["max_batch"]["in_bracket"], 1);  // plan's max batch lies in [1, 100000)
  EXPECT_EQ(doc["summary"]["legacy_throughput"]["rows"], 1);
  EXPECT_EQ(doc["summary"]["single_gpu_throughput"]["rows"], 0);
  EXPECT_TRUE(doc["rows"][1]["legacy"].get<bool>());
}

TEST(ValidateE2E, ABracketWhoseFailureIsNotAboveTheRunIsAnInputError) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate-badbracket.csv";
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,metric,value,fails_at\nresnet50,rtx4090,fp16,64,max_batch,64,32\n";
  auto r = run_cli("validate " + csv);
  std::remove(csv.c_str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fails_at 32 is not above the batch that ran (64)"), std::string::npos) << r.err;
}

TEST(PlanE2E, EveryPredictionCarriesItsRangeAndSaysWhenItLeavesTheValidatedRegion) {
  auto r = run_cli("plan resnet50 --gpu rtx4090 --batch 64 --precision fp16 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["results"][0];
  // The range is the held-out errors of the request's cell, not a band around the point: where plan is
  // biased in a cell (the RTX 4090's ResNet-50 comes out too slow held out, docs/MODEL.md), the whole range
  // lies above the prediction, and says so.
  EXPECT_LT(row["throughput_low"].get<double>(), row["throughput_high"].get<double>());
  EXPECT_GT(row["throughput_high"].get<double>(), row["throughput"].get<double>());
  EXPECT_NE(row["interval"]["basis"].get<std::string>().find("held-out runs"), std::string::npos);
  // No published single-GPU run pre-trains a Llama model (torchtitan's and FlagPerf's run on 8 GPUs): a
  // full-parameter Llama plan takes the full fine-tuning runs' range (any GPU count), not one borrowed from
  // other models, and says so. A GPU count beyond the record still warns.
  auto fp8 = run_cli("plan llama3-8b --gpu h100-sxm5-80gb --batch 1 --precision fp8 --checkpointing");
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  EXPECT_NE(fp8.out.find("full fine-tuning: "), std::string::npos) << fp8.out;
  EXPECT_EQ(fp8.out.find("no validation run of a llama model"), std::string::npos) << fp8.out;
  auto wide = run_cli("plan resnet50 --gpu h100-sxm5-80gb --batch 64 --gpus 8 --nodes 200");
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_NE(wide.out.find("Outside the validated region"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("no validation run with 1600 GPUs"), std::string::npos) << wide.out;
}

TEST(ValidateE2E, ErrorsAreComputedPerRow) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate.csv";
  // Today's software, as plan assumes (PyTorch 2's defaults: zero_grad frees the gradients).
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,metric,value,software_date\n"
                        "resnet50,rtx5090,fp16,64,train_throughput,1000,2025-06\n"
                        "resnet50,rtx5090,fp16,64,peak_memory,4000000000,2025-06\n";
  auto r = run_cli("validate " + csv + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = nlohmann::json::parse(r.out)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    const double predicted = row["predicted"].get<double>(), measured = row["measured"].get<double>();
    EXPECT_NEAR(row["error"].get<double>(), (predicted - measured) / measured, 1e-12);
  }
  // The same prediction `plan` makes for that configuration.
  auto plan = nlohmann::json::parse(run_cli("plan resnet50 --gpu rtx5090 --batch 64 --precision fp16 --format json").out);
  EXPECT_NEAR(rows[0]["predicted"].get<double>(), plan["results"][0]["throughput"].get<double>(), 1e-6);
  EXPECT_NEAR(rows[1]["predicted"].get<double>(), plan["results"][0]["memory"]["total"].get<double>(), 1);
  std::remove(csv.c_str());
}

TEST(ValidateE2E, MissingColumnIsAnInputError) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate-bad.csv";
  std::ofstream(csv) << "model,gpu,batch_per_gpu,metric,value\nresnet50,rtx5090,64,train_throughput,1000\n";
  auto r = run_cli("validate " + csv);
  std::remove(csv.c_str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("precision"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpusage::testing
