// Where training batches come from. The loop only sees this interface: synthetic batches resident on the
// device, or an ImageFolder read from disk by the input pipeline (src/pipeline) on worker threads.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

#include "pipeline/loader.hpp"

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
    std::int64_t seq_len = 1024;  // language
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
    if (shape.channels_last && !shape.language) batch_.input = batch_.input.contiguous(at::MemoryFormat::ChannelsLast);
  }
  Batch next() override { return batch_; }
  std::string mode() const override { return "synthetic, resident on the device"; }

 private:
  Batch batch_;
};

// An ImageFolder through pipeline::Loader. On the CPU the model reads the loader's batch memory itself
// (torch::from_blob, no copy; the memory goes back to the workers when the tensor is freed). On CUDA the
// loader writes into pinned host memory and next() copies it to the device; that copy, like any wait for
// the workers, is data wait.
class ImageFolderSource final : public DataSource {
 public:
  ImageFolderSource(pipeline::ImageFolder folder, pipeline::LoaderConfig config, const torch::Device& device,
                    bool channels_last);
  Batch next() override;
  std::string mode() const override;

  // The loader alone, before training: `batches` batches taken and dropped as fast as the workers make
  // them, after one untimed batch (thread start, first reads).
  struct Probe {
    std::int64_t images = 0;
    double images_per_s = 0;             // wall clock, all workers
    double per_worker_images_per_s = 0;  // images / the workers' summed busy time
  };
  Probe probe(int batches);
  pipeline::LoaderStats stats() const { return loader_->stats(); }

 private:
  std::unique_ptr<pipeline::Loader> loader_;
  torch::Device device_;
  bool channels_last_;
  std::int64_t image_size_;
};

}  // namespace gpusage::bench
