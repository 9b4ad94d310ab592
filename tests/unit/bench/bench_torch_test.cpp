#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/data_source.hpp"
#include "bench/model_catalog.hpp"
#include "bench/torch_models.hpp"
#include "bench/train.hpp"
#include "bench/trainer.hpp"
#include "core/workload/workload.hpp"
#include "pipeline/synthetic_images.hpp"

namespace gpusage::bench {
namespace {

std::map<std::string, std::vector<std::int64_t>> shapes_of(torch::nn::Module& module) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& item : module.named_parameters()) shapes[item.key()] = item.value().sizes().vec();
  return shapes;
}

// tests/unit/bench/fixtures/<id>.params.txt: "name dim dim …" per parameter, written by torchvision 0.14.
std::map<std::string, std::vector<std::int64_t>> torchvision_shapes(const std::string& id) {
  std::ifstream in(std::string(GPUSAGE_SOURCE_DIR) + "/tests/unit/bench/fixtures/" + id + ".params.txt");
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    std::int64_t d = 0;
    while (fields >> d) shapes[name].push_back(d);
  }
  return shapes;
}

// ---- architectures and counts ----

// Parameters of a zoo model at the default shape, built once per test program (building resnet152 or
// vit_b_16 takes seconds on a slow CPU).
std::int64_t parameters_of(const std::string& id) {
  static std::map<std::string, std::int64_t> counts;
  auto it = counts.find(id);
  if (it == counts.end()) {
    auto model = make_model(id, {});
    it = counts.emplace(id, count_parameters(*model)).first;
  }
  return it->second;
}

TEST(BenchModels, NamesAndShapesMatchTorchvisionOneToOne) {
  for (const std::string id : {"resnet50", "mobilenet_v2", "vit_b_16"}) {
    const auto expected = torchvision_shapes(id);
    ASSERT_FALSE(expected.empty()) << "fixture for " << id;
    auto model = make_model(id, {});
    EXPECT_EQ(shapes_of(*model), expected) << id;
  }
}

TEST(BenchModels, ParameterCountsEqualTheReferenceImplementations) {
  // Instantiated, never run: resnet152 and vit_b_16 forward passes are slow on CPU. The larger GPT-2
  // sizes (355M–1.5B parameters) would need gigabytes here; gpt2 stands for the family.
  for (const auto& info : models()) {
    if (info.language() && info.id != "gpt2") continue;
    EXPECT_EQ(parameters_of(info.id), info.reference_params) << info.id;
  }
}

TEST(BenchModels, Gpt2FamilyCountsFollowTheirConfigs) {
  // The same decoder at a tenth of the width checks the per-layer formula the larger sizes rely on.
  Gpt2Config c;
  c.n_embd = 64;
  c.n_head = 4;
  c.n_layer = 3;
  c.vocab_size = 1000;
  c.n_positions = 128;
  const std::int64_t d = 64;
  const std::int64_t block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d);
  auto model = make_gpt2(c);
  EXPECT_EQ(count_parameters(*model), 1000 * d + 128 * d + 3 * block + 2 * d);
}

TEST(BenchModels, CountsEqualThePlanZoo) {
  // The plan's workload zoo (core/workload) must count what the bench trains.
  for (const auto& info : models()) {
    if (info.language() && info.id != "gpt2") continue;
    EXPECT_EQ(parameters_of(info.id), workload::build(info.id).params()) << info.id;
  }
}

TEST(BenchModels, VisionModelsGiveClassLogitsAtSmallResolutions) {
  for (const std::string id : {"resnet18", "mobilenet_v2"}) {
    auto model = make_model(id, {.resolution = 32});
    model->eval();
    torch::NoGradGuard no_grad;
    EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 32})).sizes(), (std::vector<std::int64_t>{2, 1000})) << id;
  }
}

// ---- the training step ----

// Hands out consecutive slices of one fixed batch, so K micro-batches of B cover the same samples as one
// batch of K·B.
class SlicedSource final : public DataSource {
 public:
  SlicedSource(Batch all, std::int64_t micro) : all_(std::move(all)), micro_(micro) {}
  Batch next() override {
    Batch b{all_.input.narrow(0, offset_, micro_), all_.target.narrow(0, offset_, micro_)};
    offset_ = (offset_ + micro_) % all_.input.size(0);
    return b;
  }
  std::string mode() const override { return "test slices"; }

 private:
  Batch all_;
  std::int64_t micro_;
  std::int64_t offset_ = 0;
};

Gpt2Config tiny_gpt2() {
  Gpt2Config c;
  c.vocab_size = 97;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.dropout = 0.0;  // deterministic: the equivalence holds sample by sample
  return c;
}

Batch tiny_tokens(std::int64_t batch, std::int64_t seq) {
  torch::manual_seed(11);
  return {torch::randint(97, {batch, seq}, torch::kLong), torch::randint(97, {batch, seq}, torch::kLong)};
}

std::vector<torch::Tensor> gradients_after(int accumulate, std::int64_t micro, const Batch& all) {
  torch::manual_seed(3);  // same initial weights for both runs
  auto model = make_gpt2(tiny_gpt2());
  TrainerConfig config;
  config.language = true;
  config.accumulate = accumulate;
  Trainer trainer(model, config);
  SlicedSource source(all, micro);
  double wait_s = 0;
  trainer.accumulate_gradients(source, wait_s);
  std::vector<torch::Tensor> grads;
  for (const auto& p : trainer.parameters()) grads.push_back(p.grad().clone());
  return grads;
}

TEST(BenchTrainer, AccumulatingKStepsOfBatchBEqualsOneStepOfKTimesB) {
  // A LayerNorm transformer: no batch statistics, so the equivalence is exact up to rounding (BatchNorm
  // models differ by design: their statistics are per micro-batch).
  const Batch all = tiny_tokens(8, 12);
  const auto accumulated = gradients_after(4, 2, all);
  const auto whole = gradients_after(1, 8, all);
  ASSERT_EQ(accumulated.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i)
    EXPECT_TRUE(torch::allclose(accumulated[i], whole[i], 1e-4, 1e-6)) << "parameter " << i;
}

std::vector<torch::Tensor> parameters_with_gradients(const std::vector<std::vector<float>>& grads) {
  std::vector<torch::Tensor> params;
  for (const auto& g : grads) {
    auto p = torch::zeros({static_cast<std::int64_t>(g.size())}, torch::requires_grad());
    p.mutable_grad() = torch::tensor(g);
    params.push_back(p);
  }
  return params;
}

TEST(BenchTrainer, ClippingScalesTheGlobalNormDownToTheThreshold) {
  const auto params = parameters_with_gradients({{3, 0}, {0, 4}});  // global norm 5
  const double before = clip_gradients(params, 1.0).item<double>();
  EXPECT_NEAR(before, 5.0, 1e-6);
  const double after = clip_gradients(params, std::nullopt).item<double>();
  EXPECT_NEAR(after, 1.0, 1e-5);
  EXPECT_NEAR(params[0].grad()[0].item<double>(), 0.6, 1e-5);
}

TEST(BenchTrainer, ClippingLeavesGradientsUnderTheThresholdAlone) {
  const auto params = parameters_with_gradients({{0.3f, 0.4f}});
  EXPECT_NEAR(clip_gradients(params, 1.0).item<double>(), 0.5, 1e-6);
  EXPECT_FLOAT_EQ(params[0].grad()[1].item<float>(), 0.4f);
}

TEST(BenchTrainer, RecordsTheNormEveryStepWithClip) {
  torch::manual_seed(5);
  auto model = make_gpt2(tiny_gpt2());
  TrainerConfig config;
  config.language = true;
  config.clip_norm = 0.01;
  Trainer trainer(model, config);
  SlicedSource source(tiny_tokens(2, 8), 2);
  double wait_s = 0;
  const StepOutcome outcome = trainer.step(source, wait_s);
  ASSERT_TRUE(outcome.grad_norm.has_value());
  EXPECT_GT(*outcome.grad_norm, 0.01);
  EXPECT_TRUE(outcome.finite);
  EXPECT_TRUE(outcome.updated);
}

TEST(BenchTrainer, DetectsANonFiniteLossAndSkipsTheUpdate) {
  torch::manual_seed(5);
  auto model = make_gpt2(tiny_gpt2());
  {
    torch::NoGradGuard no_grad;
    model->parameters().back().fill_(std::numeric_limits<float>::infinity());  // ln_f.bias: the exploding case
  }
  TrainerConfig config;
  config.language = true;
  Trainer trainer(model, config);
  const auto before = model->parameters().front().clone();
  SlicedSource source(tiny_tokens(2, 8), 2);
  double wait_s = 0;
  const StepOutcome outcome = trainer.step(source, wait_s);
  EXPECT_FALSE(outcome.finite);
  EXPECT_FALSE(outcome.updated);
  EXPECT_TRUE(torch::equal(model->parameters().front(), before));
}

TEST(BenchTrainer, ChannelsLastReordersFourDimensionalWeightsOnly) {
  auto model = make_model("resnet18", {});
  to_channels_last(*model);
  for (const auto& p : model->parameters()) {
    if (p.dim() == 4) {
      EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast));
    }
  }
}

// ---- a whole trial, as gpusage-bench runs it ----

// resnet18 at 32 px, batch 2, on the CPU.
TrialConfig tiny_cpu_trial(int steps, int warmup) {
  TrialConfig c;
  c.options.model = "resnet18";
  c.options.resolution = 32;
  resolve_for_device(c.options, DeviceKind::cpu);
  c.batch = 2;
  c.steps = steps;
  c.warmup = warmup;
  return c;
}

TEST(BenchTrial, ShortCpuTrialMeasuresEveryTimedStep) {
  const TrialConfig c = tiny_cpu_trial(2, 1);
  const TrialResult r = run_trial(c);
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(r.step_time_s.size(), 2u);
  EXPECT_EQ(r.samples, 4);
  ASSERT_TRUE(r.throughput().has_value());
  EXPECT_GT(*r.throughput(), 0);
  EXPECT_EQ(r.loss.size(), 2u);
  EXPECT_TRUE(r.grad_norm.empty());  // only recorded with --clip
}

TEST(BenchTrial, InjectedMemoryLimitFailsTheTrialAsOutOfMemory) {
  TrialConfig c = tiny_cpu_trial(1, 0);
  c.memory_limit_bytes = 1024;  // resnet18's weights alone are 46 MB
  const TrialResult r = run_trial(c);
  EXPECT_EQ(r.failure, FailureKind::out_of_memory);
  EXPECT_NE(r.reason.find("exceeded --memory-limit 1024"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.throughput().has_value());
}

// ---- ImageFolder input ----

// 10 small JPEGs in 2 classes under a fresh temporary directory.
std::string jpeg_folder(const std::string& name) {
  const std::string root = (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(root);
  pipeline::JpegFolderSpec spec;
  spec.images = 10;
  spec.classes = 2;
  spec.width = 40;
  spec.height = 30;
  pipeline::write_jpeg_folder(root, spec);
  return root;
}

TEST(BenchImageFolder, CpuBatchesAreTheLoadersMemoryAsNchwTensors) {
  const std::string root = jpeg_folder("gpusage-torch-folder");
  pipeline::LoaderConfig c;
  c.batch_size = 3;
  c.image_size = 16;
  c.workers = 2;
  ImageFolderSource source(pipeline::scan_image_folder(root), c, torch::kCPU, false);
  pipeline::Loader reference(pipeline::scan_image_folder(root), c);  // same seed: the same batches
  for (int b = 0; b < 4; ++b) {
    const Batch batch = source.next();
    const pipeline::BatchLease expected = reference.next();
    ASSERT_EQ(batch.input.sizes(), (std::vector<std::int64_t>{3, 3, 16, 16}));
    EXPECT_EQ(batch.input.dtype(), torch::kFloat);
    EXPECT_TRUE(batch.input.is_contiguous());
    EXPECT_EQ(batch.target.dtype(), torch::kLong);
    EXPECT_TRUE(torch::equal(batch.input, torch::from_blob(expected.images(), {3, 3, 16, 16})));
    EXPECT_TRUE(torch::equal(batch.target, torch::from_blob(const_cast<std::int64_t*>(expected.labels()), {3},
                                                            torch::TensorOptions().dtype(torch::kLong))));
  }
  std::filesystem::remove_all(root);
}

TEST(BenchTrial, ImageFolderTrialProbesTheLoaderAndTrainsOnItsBatches) {
  const std::string root = jpeg_folder("gpusage-torch-trial");
  TrialConfig c = tiny_cpu_trial(2, 1);
  c.options.data = root;
  c.options.workers = 2;
  c.folder = std::make_shared<const pipeline::ImageFolder>(pipeline::scan_image_folder(root));
  const TrialResult r = run_trial(c);
  std::filesystem::remove_all(root);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_TRUE(r.loader.has_value());
  EXPECT_EQ(r.loader->workers, 2);
  EXPECT_GE(r.loader->probe_images, 256);
  EXPECT_GT(r.loader->images_per_s, 0);
  EXPECT_EQ(r.loader->failed_files, 0);
  EXPECT_EQ(r.data_wait_s.size(), 2u);
  EXPECT_TRUE(r.workers_needed().has_value());
}

}  // namespace
}  // namespace gpusage::bench
