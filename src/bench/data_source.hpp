// Where training batches come from. The loop only sees this interface, so the fast input pipeline
// (ImageFolder decoded with libturbojpeg on worker threads, its own issue) plugs in beside the synthetic one.
#pragma once

#include <torch/torch.h>

#include <string>

namespace gpusage::bench {

struct Batch {
  torch::Tensor input;   // images [B, 3, R, R] float, or token ids [B, S] int64
  torch::Tensor target;  // class ids [B], or next-token ids [B, S]
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // The next batch, already on the training device. The loop times this call as data wait.
  virtual Batch next() = 0;
  // For the report's regime line: "synthetic, resident on the device", "ImageFolder from disk", …
  virtual std::string mode() const = 0;
};

// One random batch made once on the device and handed out every step, as published benchmarks do
// (tf_cnn_benchmarks --data_name=synthetic, DeepLearningExamples --data-backend synthetic): it measures
// the training step alone. Data wait is then the cost of handing out a tensor, close to zero.
class SyntheticSource final : public DataSource {
 public:
  struct Shape {
    bool language = false;
    std::int64_t batch = 1;
    std::int64_t resolution = 224;  // vision
    std::int64_t num_classes = 1000;
    std::int64_t seq_len = 1024;    // language
    std::int64_t vocab = 50257;
    bool channels_last = false;
  };
  SyntheticSource(const Shape& shape, const torch::Device& device, std::uint64_t seed) {
    auto generator = torch::make_generator<at::CPUGeneratorImpl>(seed);
    const auto on_cpu = torch::TensorOptions().device(torch::kCPU);
    if (shape.language) {
      batch_.input = torch::randint(shape.vocab, {shape.batch, shape.seq_len}, generator, on_cpu.dtype(torch::kLong));
      batch_.target = torch::randint(shape.vocab, {shape.batch, shape.seq_len}, generator, on_cpu.dtype(torch::kLong));
    } else {
      batch_.input = torch::randn({shape.batch, 3, shape.resolution, shape.resolution}, generator, on_cpu);
      batch_.target = torch::randint(shape.num_classes, {shape.batch}, generator, on_cpu.dtype(torch::kLong));
    }
    batch_.input = batch_.input.to(device);
    batch_.target = batch_.target.to(device);
    if (shape.channels_last && !shape.language)
      batch_.input = batch_.input.contiguous(at::MemoryFormat::ChannelsLast);
  }
  Batch next() override { return batch_; }
  std::string mode() const override { return "synthetic, resident on the device"; }

 private:
  Batch batch_;
};

}  // namespace gpusage::bench
