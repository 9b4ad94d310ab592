// Photo-like images for tests and benchmarks of the loader (bench/make-jpeg-folder): smooth sky and
// ground gradients, shaded shapes, multi-scale texture and sensor noise, so that JPEG files have the
// size and decoding cost of real photographs (a flat colour compresses to a few kilobytes and decodes
// far faster than ImageNet does). Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpusage::pipeline {

// Interleaved 8-bit RGB, width * 3 bytes per row.
std::vector<std::uint8_t> synthesize_photo(int width, int height, std::uint64_t seed);

// Baseline JPEG, 4:2:0 chroma subsampling (what cameras and ImageNet's files use), with libturbojpeg.
std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& rgb, int width, int height, int quality);
// The other JPEG colour spaces a folder of photos can hold, for the decoder's tests: 8-bit grayscale (one
// byte per pixel), and four bytes per pixel stored as given, as Adobe CMYK (libjpeg's JCS_CMYK) or YCCK
// (libturbojpeg's choice for CMYK input).
enum class JpegPixels { gray, cmyk, ycck };
std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& pixels, int width, int height, int quality,
                                      JpegPixels kind);
// 8-bit RGB PNG with libpng.
std::vector<std::uint8_t> encode_png(const std::vector<std::uint8_t>& rgb, int width, int height);
// 16-bit RGB PNG, no gAMA chunk (as scanners and OpenCV write them).
std::vector<std::uint8_t> encode_png16(const std::vector<std::uint16_t>& rgb, int width, int height);

struct JpegFolderSpec {
  int images = 1000;
  int classes = 10;
  int width = 500;  // ImageNet's most common size is 500 x 375 (and 375 x 500)
  int height = 375;
  bool vary_size = true;  // sides drawn in [0.8, 1.2] of width/height, one in four images portrait
  int quality = 90;
  std::uint64_t seed = 0;
};
struct JpegFolderSummary {
  int images = 0;
  std::int64_t bytes = 0;
};
// Writes class_000/img_00000.jpg … under `root` (created). Throws std::runtime_error on I/O failure.
JpegFolderSummary write_jpeg_folder(const std::string& root, const JpegFolderSpec& spec);

}  // namespace gpusage::pipeline
