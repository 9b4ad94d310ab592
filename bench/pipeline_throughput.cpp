// pipeline_throughput: one measurement of gpusage's input pipeline, or of libturbojpeg alone, on an
// ImageFolder, as a JSON line. bench/compare-torchvision runs it beside torchvision, alternating.
//   --mode loader: Loader with W workers, RandomResizedCrop(size) + flip + normalize, batches of B;
//                  one batch of warm-up (thread start, first reads), then `--images` timed.
//   --mode decode: the ceiling: full-size tjDecompress2 to RGB of the same files, read into memory
//                  first, on W threads each decoding its share; no transform at all.
#include <fmt/format.h>
#include <sys/resource.h>
#include <turbojpeg.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "pipeline/image_folder.hpp"
#include "pipeline/loader.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace pl = gpusage::pipeline;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of this process, all threads (user + system): images per CPU-second does not depend on what
// else runs on a shared machine, wall-clock images/s does.
double process_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

std::string loader_run(const pl::ImageFolder& folder, int workers, int batch, int size, int images,
                       std::uint64_t seed) {
  pl::LoaderConfig c;
  c.batch_size = batch;
  c.image_size = size;
  c.workers = workers;
  c.seed = seed;
  pl::Loader loader(folder, c);
  loader.next();  // warm-up, released at once
  const pl::LoaderStats before = loader.stats();
  const int batches = std::max(1, (images + batch - 1) / batch);
  const double cpu_start = process_cpu_s();
  const auto start = Clock::now();
  for (int b = 0; b < batches; ++b) loader.next();
  const double wall = seconds_since(start);
  const double cpu = process_cpu_s() - cpu_start;
  const pl::LoaderStats after = loader.stats();
  const auto made = after.images - before.images;
  return fmt::format(
      R"({{"mode":"loader","workers":{},"batch":{},"size":{},"images":{},"wall_s":{:.6f},"images_per_s":{:.3f},)"
      R"("busy_images_per_s":{:.3f},"cpu_s":{:.6f},"images_per_cpu_s":{:.3f},"failed_files":{}}})",
      workers, batch, size, batches * batch, wall, batches * batch / wall,
      made / std::max(after.busy_s - before.busy_s, 1e-9), cpu, batches * batch / std::max(cpu, 1e-9),
      after.failed_files);
}

std::string decode_run(const pl::ImageFolder& folder, int threads, int images) {
  // The files, in the folder's order, read once (the loader reads them from the page cache each time).
  const std::size_t n = std::min<std::size_t>(folder.samples.size(), static_cast<std::size_t>(images));
  std::vector<std::vector<unsigned char>> files(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::ifstream in(folder.samples[i].path, std::ios::binary);
    files[i].assign(std::istreambuf_iterator<char>(in), {});
  }
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> failed{0};
  auto decode_share = [&] {
    tjhandle h = tjInitDecompress();
    std::vector<unsigned char> rgb;
    for (std::size_t i; (i = next.fetch_add(1)) < static_cast<std::size_t>(images);) {
      const auto& f = files[i % n];
      int w = 0, hgt = 0, sub = 0, cs = 0;
      if (tjDecompressHeader3(h, f.data(), f.size(), &w, &hgt, &sub, &cs) != 0 || w <= 0) {
        ++failed;
        continue;
      }
      rgb.resize(static_cast<std::size_t>(w) * hgt * 3);
      if (tjDecompress2(h, f.data(), f.size(), rgb.data(), w, w * 3, hgt, TJPF_RGB, 0) != 0) ++failed;
    }
    tjDestroy(h);
  };
  const double cpu_start = process_cpu_s();
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(decode_share);
  for (auto& t : pool) t.join();
  const double wall = seconds_since(start);
  const double cpu = process_cpu_s() - cpu_start;
  return fmt::format(R"({{"mode":"decode","workers":{},"images":{},"wall_s":{:.6f},"images_per_s":{:.3f},)"
                     R"("cpu_s":{:.6f},"images_per_cpu_s":{:.3f},"failed_files":{}}})",
                     threads, images, wall, images / wall, cpu, images / std::max(cpu, 1e-9), failed.load());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One throughput measurement of gpusage's input pipeline or of libturbojpeg alone (JSON line)"};
  std::string data, mode = "loader";
  int workers = 1, batch = 32, size = 224, images = 512;
  std::uint64_t seed = 0;
  app.add_option("--data", data, "ImageFolder directory")->required();
  app.add_option("--mode", mode, "loader|decode")->check(CLI::IsMember({"loader", "decode"}));
  app.add_option("--workers", workers, "Worker threads")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "Batch size (loader)")->check(CLI::PositiveNumber);
  app.add_option("--size", size, "Output side in pixels (loader)")->check(CLI::PositiveNumber);
  app.add_option("--images", images, "Images timed")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "Seed (loader)");
  CLI11_PARSE(app, argc, argv);
  try {
    const pl::ImageFolder folder = pl::scan_image_folder(data);
    std::cout << (mode == "loader" ? loader_run(folder, workers, batch, size, images, seed)
                                   : decode_run(folder, workers, images))
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "pipeline_throughput: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
