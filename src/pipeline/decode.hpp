// Image decoding for the loader: JPEG with libjpeg-turbo (the TurboJPEG API for headers and whole
// images; its libjpeg API to decode only a crop's part, DCT-domain scaled when the crop is much larger
// than the output), PNG with libpng. One Decoder per thread: it keeps its handle and buffers. Vendor
// headers stay in decode.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusage::pipeline {

// A file that cannot be decoded: corrupt, truncated, not an image, or a kind we do not read.
class DecodeError : public std::runtime_error {
 public:
  explicit DecodeError(const std::string& message) : std::runtime_error(message) {}
};

enum class ImageFormat { jpeg, png, unknown };
// From the first bytes (the extension may lie): FF D8 FF for JPEG, the 8-byte PNG signature.
ImageFormat sniff_format(std::span<const std::uint8_t> bytes);

struct ScalingFactor {
  int num = 1;
  int denom = 1;
  friend bool operator==(const ScalingFactor&, const ScalingFactor&) = default;
};
// What libjpeg-turbo gives a scaled dimension: ceil(dimension * num / denom) (TJSCALED).
int scaled_dimension(int dimension, ScalingFactor factor);
// The scaling factors libturbojpeg offers (2.1: n/8 for n = 1..16).
const std::vector<ScalingFactor>& jpeg_scaling_factors();
// The ones that pay: 1/2, 1/4, 1/8 and 1/1. libjpeg-turbo has SIMD inverse DCTs for 8x8, 4x4, 2x2 and
// 1x1 blocks only; the others (7/8, 3/4, 5/8, 3/8) run in plain C and are slower than a full decode
// (measured on bench/make-jpeg-folder's 500 x 375 images: 1/1 1.16 ms, 7/8 1.64, 3/4 1.42, 5/8 1.35,
// 1/2 0.99, 1/4 0.97, 1/8 0.88 ms per image; entropy decoding, which scaling does not shrink,
// dominates).
const std::vector<ScalingFactor>& fast_jpeg_scaling_factors();
// The smallest factor of `factors` (at most 1) at which a crop_width x crop_height crop still spans at
// least out_size pixels both ways, so that the resample only shrinks and nothing is lost; 1/1 when the
// crop is smaller than the output already.
ScalingFactor choose_scaling(int crop_width, int crop_height, int out_size, const std::vector<ScalingFactor>& factors);

struct ImageSize {
  int width = 0;
  int height = 0;
};

// Decoded pixels, interleaved 8-bit RGB, width * 3 bytes per row: the whole image, or the part of it whose
// top-left pixel is (left, top) of the (scaled) image.
struct DecodedImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;
  int left = 0;
  int top = 0;
};

// A rectangle of pixels of the full-size image (the crop, with any margin the resample reads).
struct PixelBox {
  int left = 0, top = 0, right = 0, bottom = 0;  // [left, right) x [top, bottom)
};

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // The full-size dimensions. Throws DecodeError.
  ImageSize size(std::span<const std::uint8_t> bytes, ImageFormat format);
  // Decodes to RGB at `factor` (JPEG; PNG is always decoded at 1/1). Throws DecodeError, also for a
  // truncated JPEG (what Pillow does unless LOAD_TRUNCATED_IMAGES is set).
  void decode(std::span<const std::uint8_t> bytes, ImageFormat format, ScalingFactor factor, DecodedImage& out) {
    decode(bytes, format, size(bytes, format), factor, out);
  }
  // The same, for a caller that has read the size already (the header is not parsed twice).
  void decode(std::span<const std::uint8_t> bytes, ImageFormat format, ImageSize full, ScalingFactor factor,
              DecodedImage& out);
  // Only the part of the image a crop needs, at `factor`: `box` is in the scaled image's pixels. For a
  // JPEG (libjpeg-turbo's libjpeg API) the rows above the box are skipped without the inverse DCT
  // (jpeg_skip_scanlines), the rows below are never decoded, and the columns outside are not
  // transformed or colour-converted (jpeg_crop_scanline, which widens the box to whole blocks): about a
  // fifth less time than a full decode for RandomResizedCrop's boxes. Pixels equal the full decode's
  // except in the first and last decoded column, where chroma upsampling replicates the edge; give the
  // box a margin of 2 beyond what is read. A file truncated below the box is not noticed. PNG: the whole
  // image (left = top = 0).
  void decode_region(std::span<const std::uint8_t> bytes, ImageFormat format, ImageSize full, ScalingFactor factor,
                     const PixelBox& box, DecodedImage& out);

 private:
  void* jpeg_ = nullptr;            // tjhandle
  std::vector<std::uint8_t> cmyk_;  // a CMYK or YCCK JPEG's pixels before their conversion to RGB
};

}  // namespace gpusage::pipeline
