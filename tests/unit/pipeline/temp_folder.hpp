// A scratch directory for a test, removed afterwards, with helpers that write small photo-like images.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pipeline/synthetic_images.hpp"

namespace gpusage::pipeline::testing {

class TempFolder {
 public:
  TempFolder() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gpusage-pipeline-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  std::string str() const { return path_.string(); }
  std::string path(const std::string& relative) const { return (path_ / relative).string(); }

  void write(const std::string& relative, const std::vector<std::uint8_t>& bytes) const {
    const auto file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  void write_text(const std::string& relative, const std::string& text) const {
    write(relative, std::vector<std::uint8_t>(text.begin(), text.end()));
  }
  // A small JPEG of the given size, content from `seed`.
  void jpeg(const std::string& relative, int width, int height, std::uint64_t seed) const {
    write(relative, encode_jpeg(synthesize_photo(width, height, seed), width, height, 90));
  }

 private:
  std::filesystem::path path_;
};

}  // namespace gpusage::pipeline::testing
