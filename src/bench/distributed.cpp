// Data parallelism through torch.distributed's C++ core (c10d): a TCPStore on loopback for the
// rendezvous, ProcessGroupGloo on CPU and ProcessGroupNCCL on CUDA, gradients all-reduced every step
// in one flat bucket (DDP overlaps buckets with backward; this does not, and says so in the report).
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <stdexcept>

#include "bench/train.hpp"
#include "bench/trainer.hpp"

#if GPUSAGE_BENCH_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if GPUSAGE_BENCH_CUDA && __has_include(<nccl.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define GPUSAGE_BENCH_NCCL 1
#endif
#endif

namespace gpusage::bench {

#if GPUSAGE_BENCH_C10D

namespace {

constexpr std::chrono::seconds kTimeout{120};

template <typename Group>
class C10dCommunicator final : public Communicator {
 public:
  C10dCommunicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<Group> group, int rank, int world,
                   std::string backend)
      : store_(std::move(store)), group_(std::move(group)), rank_(rank), world_(world), backend_(std::move(backend)) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string backend() const override { return backend_; }

  void all_reduce_mean(std::vector<torch::Tensor>& tensors) override {
    if (tensors.empty()) return;
    std::vector<torch::Tensor> flat;
    flat.reserve(tensors.size());
    for (const auto& t : tensors) flat.push_back(t.reshape({-1}));
    std::vector<torch::Tensor> bucket{torch::cat(flat)};
    group_->allreduce(bucket)->wait();
    bucket[0].div_(world_);
    std::int64_t offset = 0;
    for (auto& t : tensors) {
      const auto n = t.numel();
      t.copy_(bucket[0].narrow(0, offset, n).view_as(t));
      offset += n;
    }
  }

  void barrier() override { group_->barrier()->wait(); }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<Group> group_;
  int rank_, world_;
  std::string backend_;
};

c10::intrusive_ptr<c10d::Store> make_store(int rank, int world, int port) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = rank == 0;
  options.numWorkers = static_cast<std::size_t>(world);
  options.waitWorkers = true;
  options.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kTimeout);
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

}  // namespace

bool distributed_available([[maybe_unused]] DeviceKind device) {
#if GPUSAGE_BENCH_NCCL
  return true;
#else
  return device == DeviceKind::cpu;
#endif
}

std::shared_ptr<Communicator> connect_process_group(DeviceKind device, int rank, int world, int port) {
  auto store = make_store(rank, world, port);
  if (device == DeviceKind::cpu) {
    auto options = c10d::ProcessGroupGloo::Options::create(kTimeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
    return std::make_shared<C10dCommunicator<c10d::ProcessGroupGloo>>(store, group, rank, world, "gloo");
  }
#if GPUSAGE_BENCH_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
  return std::make_shared<C10dCommunicator<c10d::ProcessGroupNCCL>>(store, group, rank, world, "nccl");
#else
  throw std::runtime_error("this gpusage-bench was built without NCCL: --distributed on CUDA is unavailable");
#endif
}

#else

bool distributed_available(DeviceKind) { return false; }

std::shared_ptr<Communicator> connect_process_group(DeviceKind, int, int, int) {
  throw std::runtime_error(
      "this gpusage-bench was built without c10d (no Gloo headers: install libgloo-dev and reconfigure)");
}

#endif

}  // namespace gpusage::bench
