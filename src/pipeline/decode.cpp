#include "pipeline/decode.hpp"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>

// libjpeg's header wants FILE and size_t declared first.
#include <jerror.h>
#include <jpeglib.h>

namespace gpusage::pipeline {
namespace {

constexpr std::uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

// The message, and a fresh handle in place of the failed one: libturbojpeg 2.1 can leave a handle whose
// decode failed in a state where the next, good file fails with the same error.
DecodeError jpeg_error(void*& handle) {
  DecodeError error(std::string("JPEG: ") + tjGetErrorStr2(static_cast<tjhandle>(handle)));
  tjDestroy(static_cast<tjhandle>(handle));
  handle = tjInitDecompress();
  if (!handle) throw std::runtime_error("tjInitDecompress failed");
  return error;
}

// A warning from libjpeg is not always fatal (Pillow, too, reads files with extraneous bytes before a
// marker), but a premature end means the file is truncated: Pillow refuses it, and so do we.
bool is_fatal(tjhandle handle) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  return std::strstr(tjGetErrorStr2(handle), "Premature end") != nullptr;
}

struct PngImage {
  png_image image{};
  PngImage() { image.version = PNG_IMAGE_VERSION; }
  ~PngImage() { png_image_free(&image); }
  void begin(std::span<const std::uint8_t> bytes) {
    if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
      throw DecodeError(std::string("PNG: ") + image.message);
  }
};

// libjpeg reports errors through a callback that must not return: longjmp back to decode_jpeg_region,
// whose frame holds no C++ object with a destructor.
struct JpegErrors {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings are ignored (as Pillow does) except a premature end inside the rows read: a truncated file.
void jpeg_message(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_fail(cinfo);
}

// Returns false with the message in `errors` on failure. `out` is resized before any row is decoded.
bool decode_jpeg_region(const std::uint8_t* data, std::size_t size, ScalingFactor factor, const PixelBox& box,
                        DecodedImage& out, JpegErrors& errors) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = jpeg_fail;
  errors.manager.emit_message = jpeg_message;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  cinfo.scale_num = static_cast<unsigned>(factor.num);
  cinfo.scale_denom = static_cast<unsigned>(factor.denom);
  jpeg_start_decompress(&cinfo);
  const auto width = static_cast<int>(cinfo.output_width), height = static_cast<int>(cinfo.output_height);
  const int left = std::clamp(box.left, 0, width), right = std::clamp(box.right, left, width);
  const int top = std::clamp(box.top, 0, height), bottom = std::clamp(box.bottom, top, height);
  JDIMENSION x = static_cast<JDIMENSION>(left), w = static_cast<JDIMENSION>(std::max(right - left, 1));
  if (left > 0 || right < width) jpeg_crop_scanline(&cinfo, &x, &w);
  if (top > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(top));
  out.left = static_cast<int>(x);
  out.top = top;
  out.width = static_cast<int>(cinfo.output_width);
  out.height = bottom - top;
  const std::size_t stride = static_cast<std::size_t>(out.width) * 3;
  out.rgb.resize(stride * static_cast<std::size_t>(out.height));
  JSAMPROW rows[16];
  while (cinfo.output_scanline < static_cast<JDIMENSION>(bottom)) {
    const int first = static_cast<int>(cinfo.output_scanline) - top;
    const int n = std::min(16, bottom - static_cast<int>(cinfo.output_scanline));
    for (int i = 0; i < n; ++i) rows[i] = out.rgb.data() + static_cast<std::size_t>(first + i) * stride;
    jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(n));
  }
  jpeg_abort_decompress(&cinfo);  // the rows below the box are never decoded
  jpeg_destroy_decompress(&cinfo);
  return true;
}

}  // namespace

ImageFormat sniff_format(std::span<const std::uint8_t> bytes) {
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) return ImageFormat::jpeg;
  if (bytes.size() >= 8 && std::equal(bytes.begin(), bytes.begin() + 8, kPngSignature)) return ImageFormat::png;
  return ImageFormat::unknown;
}

int scaled_dimension(int dimension, ScalingFactor f) {
  return static_cast<int>((static_cast<long long>(dimension) * f.num + f.denom - 1) / f.denom);
}

const std::vector<ScalingFactor>& jpeg_scaling_factors() {
  static const std::vector<ScalingFactor> factors = [] {
    int n = 0;
    const tjscalingfactor* list = tjGetScalingFactors(&n);
    std::vector<ScalingFactor> v;
    for (int i = 0; list && i < n; ++i) v.push_back({list[i].num, list[i].denom});
    return v;
  }();
  return factors;
}

const std::vector<ScalingFactor>& fast_jpeg_scaling_factors() {
  static const std::vector<ScalingFactor> factors = [] {
    std::vector<ScalingFactor> v;
    for (const ScalingFactor f : jpeg_scaling_factors())
      if (f.num * 8 == f.denom || f.num * 4 == f.denom || f.num * 2 == f.denom || f.num == f.denom) v.push_back(f);
    return v;
  }();
  return factors;
}

ScalingFactor choose_scaling(int crop_width, int crop_height, int out_size, const std::vector<ScalingFactor>& factors) {
  ScalingFactor best{1, 1};
  for (const ScalingFactor f : factors) {
    if (static_cast<long long>(f.num) > f.denom) continue;  // enlarging adds no detail
    const bool covers = static_cast<long long>(crop_width) * f.num >= static_cast<long long>(out_size) * f.denom &&
                        static_cast<long long>(crop_height) * f.num >= static_cast<long long>(out_size) * f.denom;
    if (covers && static_cast<long long>(f.num) * best.denom < static_cast<long long>(best.num) * f.denom) best = f;
  }
  return best;
}

Decoder::Decoder() : jpeg_(tjInitDecompress()) {
  if (!jpeg_) throw std::runtime_error("tjInitDecompress failed");
}

Decoder::~Decoder() { tjDestroy(static_cast<tjhandle>(jpeg_)); }

void Decoder::decode_region(std::span<const std::uint8_t> bytes, ImageFormat format, ImageSize full,
                            ScalingFactor factor, const PixelBox& box, DecodedImage& out) {
  if (format != ImageFormat::jpeg) {
    decode(bytes, format, full, factor, out);
    return;
  }
  JpegErrors errors;
  if (!decode_jpeg_region(bytes.data(), bytes.size(), factor, box, out, errors))
    throw DecodeError(std::string("JPEG: ") + errors.message);
}

ImageSize Decoder::size(std::span<const std::uint8_t> bytes, ImageFormat format) {
  if (format == ImageFormat::jpeg) {
    auto* handle = static_cast<tjhandle>(jpeg_);
    int width = 0, height = 0, subsampling = 0, colorspace = 0;
    // On a header cut short libturbojpeg 2.1 returns 0 with a warning and leaves the outputs unset.
    if (tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height,
                            &subsampling, &colorspace) != 0 ||
        width <= 0 || height <= 0)
      throw jpeg_error(jpeg_);
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
      throw DecodeError("JPEG: CMYK images are not supported");
    return {width, height};
  }
  if (format == ImageFormat::png) {
    PngImage png;
    png.begin(bytes);
    return {static_cast<int>(png.image.width), static_cast<int>(png.image.height)};
  }
  throw DecodeError("not a JPEG or PNG file");
}

void Decoder::decode(std::span<const std::uint8_t> bytes, ImageFormat format, ImageSize full, ScalingFactor factor,
                     DecodedImage& out) {
  out.left = out.top = 0;
  if (format == ImageFormat::jpeg) {
    auto* handle = static_cast<tjhandle>(jpeg_);
    out.width = scaled_dimension(full.width, factor);
    out.height = scaled_dimension(full.height, factor);
    out.rgb.resize(static_cast<std::size_t>(out.width) * out.height * 3);
    if (tjDecompress2(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), out.rgb.data(), out.width,
                      out.width * 3, out.height, TJPF_RGB, 0) != 0 &&
        is_fatal(handle))
      throw jpeg_error(jpeg_);
    return;
  }
  if (format == ImageFormat::png) {
    PngImage png;
    png.begin(bytes);
    png.image.format = PNG_FORMAT_RGB;
    out.width = static_cast<int>(png.image.width);
    out.height = static_cast<int>(png.image.height);
    out.rgb.resize(PNG_IMAGE_SIZE(png.image));
    if (!png_image_finish_read(&png.image, nullptr, out.rgb.data(), 0, nullptr))
      throw DecodeError(std::string("PNG: ") + png.image.message);
    return;
  }
  throw DecodeError("not a JPEG or PNG file");
}

}  // namespace gpusage::pipeline
