// `gpusage doctor --log` on large logs (issue 12): the streaming scanner's rate on one core and its memory.
//   BM_ScanTrainingLog  a 64 MiB in-memory log of typical training output (progress bars, Trainer dicts with
//                       loss and grad_norm, NCCL INFO, TensorFlow device lines, detectron2 events, one OOM)
//                       fed in 1 MiB chunks; bytes_per_second is the rate.
//   BM_ScanFile2GiB     writes a 2 GiB log to $TMPDIR (or /tmp), streams it through scan_log_file and reports
//                       the process's peak RSS (max_rss_mib). Run it alone so no other benchmark's buffers
//                       count: log_scan_bench --benchmark_filter=File
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"

namespace {

// One block of lines in the shapes real logs have (see tests/fixtures/doctor/real for the originals).
std::string block(int step) {
  std::string s;
  s += " 14%|█▍        | 377/2724 [13:55:57<86:19:20, 132.41s/it]\n";
  s += "{'loss': 1.6747, 'grad_norm': 0.8312, 'learning_rate': 0.0001956204379562044, 'epoch': 0.1}\n";
  s += "node17-2:36754:36754 [6] NCCL INFO ncclCommInitRank comm 0xa624cf0 rank 6 nranks 8 cudaDev 6 busId "
       "90000\n";
  s += "[11/01 20:14:15 d2.utils.events]: eta: 5:41:49  iter: " + std::to_string(step) +
       "  total_loss: 1.707  loss_cls: 1.184  loss_box_reg: 0.475  time: 0.2293  data_time: 0.0033  lr: "
       "0.003796\n";
  s += "2020-06-19 08:35:38.823827: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1180] Device "
       "interconnect "
       "StreamExecutor with strength 1 edge matrix:\n";
  s += "INFO:tensorflow:global step 37: loss = 38.0518 (22.693 sec/step)\n";
  s += "244/244 ━━━━━━━━━━━━━━━━━━━━ 79s 319ms/step - accuracy: 0.8709 - loss: 0.3019 - val_loss: 0.2839\n";
  s += "Epoch 3:  45%|████▌     | 450/1000 [01:23<01:40,  5.47it/s, loss=0.234, v_num=0]\n";
  return s;
}

std::string make_log(std::size_t bytes) {
  std::string log;
  log.reserve(bytes + 4096);
  for (int step = 0; log.size() < bytes; ++step) log += block(step);
  log +=
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.12 "
      "GiB "
      "already allocated; 1.05 GiB free; 21.50 GiB reserved in total by PyTorch)\n";
  return log;
}

void BM_ScanTrainingLog(benchmark::State& state) {
  const std::string log = make_log(64u << 20);
  constexpr std::size_t kChunk = 1u << 20;
  for (auto _ : state) {
    gpusage::diagnose::LogScanner scanner;
    for (std::size_t at = 0; at < log.size(); at += kChunk) {
      scanner.feed_text(std::string_view(log).substr(at, kChunk));
    }
    scanner.finish();
    benchmark::DoNotOptimize(scanner.scan().cuda_oom_count);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_ScanTrainingLog)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ScanFile2GiB(benchmark::State& state) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/gpusage-log-scan-bench.log";
  const std::string piece = make_log(1u << 20);  // 1 MiB written 2048 times: the writer stays small too
  constexpr std::size_t kPieces = 2048;
  {
    std::ofstream out(path, std::ios::binary);
    for (std::size_t i = 0; i < kPieces; ++i)
      out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  std::size_t lines = 0;
  for (auto _ : state) {
    const gpusage::diagnose::LogScan scan = gpusage::diagnose::scan_log_file(path);
    lines = scan.lines;
    benchmark::DoNotOptimize(gpusage::diagnose::check_log(scan, {}));
  }
  std::remove(path.c_str());
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * piece.size() * kPieces));
  state.counters["lines"] = static_cast<double>(lines);
  state.counters["max_rss_mib"] =
      static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}
BENCHMARK(BM_ScanFile2GiB)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
