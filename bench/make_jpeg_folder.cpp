// make-jpeg-folder: writes an ImageFolder of photo-like JPEGs (pipeline/synthetic_images.hpp) for the
// loader's tests and benchmarks, and says how long it took and the mean file size.
//   make-jpeg-folder DIR [--images 1000] [--classes 10] [--width 500] [--height 375] [--quality 90] [--seed 0]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "pipeline/synthetic_images.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Writes an ImageFolder (one folder per class) of photo-like JPEGs, ImageNet-like in size"};
  std::string dir;
  gpusage::pipeline::JpegFolderSpec spec;
  bool fixed_size = false;
  app.add_option("dir", dir, "Folder to write (created)")->required();
  app.add_option("--images", spec.images, "Number of images")->default_str("1000");
  app.add_option("--classes", spec.classes, "Number of class folders")->default_str("10");
  app.add_option("--width", spec.width, "Mean width in pixels")->default_str("500");
  app.add_option("--height", spec.height, "Mean height in pixels")->default_str("375");
  app.add_flag("--fixed-size", fixed_size, "Every image exactly width x height (default: sides vary +-20%)");
  app.add_option("--quality", spec.quality, "JPEG quality")->default_str("90");
  app.add_option("--seed", spec.seed, "Seed")->default_str("0");
  CLI11_PARSE(app, argc, argv);
  if (spec.images < 1 || spec.classes < 1 || spec.width < 8 || spec.height < 8 || spec.quality < 1 ||
      spec.quality > 100) {
    std::cerr << "make-jpeg-folder: --images, --classes >= 1, --width, --height >= 8, --quality in 1..100\n";
    return 2;
  }
  spec.vary_size = !fixed_size;
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto summary = gpusage::pipeline::write_jpeg_folder(dir, spec);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("make-jpeg-folder: {} images in {} classes under {} in {:.2f} s, mean {:.1f} KB\n",
                             summary.images, spec.classes, dir, seconds,
                             static_cast<double>(summary.bytes) / summary.images / 1000.0);
  } catch (const std::exception& e) {
    std::cerr << "make-jpeg-folder: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
