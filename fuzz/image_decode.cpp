// The input pipeline's decode and crop (bench --data): built twice, as jpeg_decode and png_decode
// (GPUSAGE_FUZZ_PNG), each handing its format to the decoder whatever the bytes are. The first two bytes pick
// the scaling factor and the crop box; the rest is the file. A decoded image has width * height * 3 bytes
// at the scaled size, and a region decode covers the box it was asked for.
#include <algorithm>

#include "fuzz/fuzz_support.hpp"
#include "pipeline/decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage::pipeline;
#ifdef GPUSAGE_FUZZ_PNG
  constexpr ImageFormat kFormat = ImageFormat::png;
#else
  constexpr ImageFormat kFormat = ImageFormat::jpeg;
#endif
  if (size < 2) return 0;
  const std::uint8_t pick = data[0], corner = data[1];
  const std::span<const std::uint8_t> file(data + 2, size - 2);
  static Decoder decoder;
  try {
    const ImageSize full = decoder.size(file, kFormat);
    FUZZ_CHECK(full.width > 0 && full.height > 0);
    // Time, not correctness: a full decode of a large image takes long enough to starve the search.
    if (static_cast<long long>(full.width) * full.height > (1 << 22)) return 0;
    const std::vector<ScalingFactor>& factors = jpeg_scaling_factors();
    const ScalingFactor factor =
        kFormat == ImageFormat::jpeg && !factors.empty() ? factors[pick % factors.size()] : ScalingFactor{1, 1};
    DecodedImage out;
    decoder.decode(file, kFormat, full, factor, out);
    const int width = kFormat == ImageFormat::jpeg ? scaled_dimension(full.width, factor) : full.width;
    const int height = kFormat == ImageFormat::jpeg ? scaled_dimension(full.height, factor) : full.height;
    FUZZ_CHECK(out.width == width && out.height == height);
    FUZZ_CHECK(out.rgb.size() == static_cast<std::size_t>(width) * height * 3);

    // A crop box from the second byte: its corner on a 16 x 16 grid of the image, half the image in size.
    PixelBox box;
    box.left = width * (corner & 15) / 16;
    box.top = height * (corner >> 4) / 16;
    box.right = std::min(width, box.left + std::max(1, width / 2));
    box.bottom = std::min(height, box.top + std::max(1, height / 2));
    DecodedImage region;
    decoder.decode_region(file, kFormat, full, factor, box, region);
    FUZZ_CHECK(region.rgb.size() == static_cast<std::size_t>(region.width) * region.height * 3);
    FUZZ_CHECK(region.left <= box.left && region.left + region.width >= box.right);
    FUZZ_CHECK(region.top <= box.top && region.top + region.height >= box.bottom);
  } catch (const DecodeError&) {
  }
  return 0;
}
