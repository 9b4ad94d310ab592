#include "pipeline/decode.hpp"

#include <fmt/format.h>
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

// Pillow refuses an image of more than twice Image.MAX_IMAGE_PIXELS (89,478,485) pixels as a decompression
// bomb (DecompressionBombError); so does the pipeline, before allocating for it: a 30-byte header can claim
// 65,535 x 65,535 pixels (12 GiB of RGB).
constexpr long long kMaxPixels = 2LL * 89'478'485;

void check_pixel_count(long long width, long long height, const char* format) {
  if (width * height > kMaxPixels)
    throw DecodeError(fmt::format("{}: {} x {} pixels is more than {} (a decompression bomb, as Pillow calls it)",
                                  format, width, height, kMaxPixels));
}

// CMYK and YCCK JPEGs (print workflows, some web images) decode to CMYK, then to RGB as Pillow does: libjpeg
// hands out the stored values, which Adobe applications write inverted (255 = no ink), and Pillow reads them
// as "CMYK;I" and converts with R = (255 - C)(255 - K) / 255 on the inverted values, that is stored C times
// stored K over 255 (Pillow's MULDIV255 rounding).
std::uint8_t muldiv255(unsigned a, unsigned b) {
  const unsigned t = a * b + 128;
  return static_cast<std::uint8_t>((t + (t >> 8)) >> 8);
}

void cmyk_to_rgb(const std::uint8_t* cmyk, std::uint8_t* rgb, std::size_t pixels) {
  for (std::size_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    rgb[0] = muldiv255(cmyk[0], cmyk[3]);
    rgb[1] = muldiv255(cmyk[1], cmyk[3]);
    rgb[2] = muldiv255(cmyk[2], cmyk[3]);
  }
}

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

// Reads a PNG as Pillow's Image.convert("RGB") sees it: a palette and 1/2/4-bit gray expanded, gray copied
// to three channels, alpha dropped (not composited), 16-bit samples cut to their high byte, and no gamma
// applied (Pillow ignores gAMA). libpng's simplified reader differs on 16-bit files: it takes them as linear
// light and converts to sRGB, brightening a mid-gray 0x8000 to 188. Errors longjmp back here from libpng;
// this frame holds no C++ object with a destructor.
struct PngSource {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at;
  char message[256];
};

bool read_png_rgb(std::span<const std::uint8_t> bytes, DecodedImage& out, PngSource& source) {
  source = {bytes.data(), bytes.size(), 0, {}};
  png_structp png = png_create_read_struct(
      PNG_LIBPNG_VER_STRING, &source,
      [](png_structp p, png_const_charp message) {
        auto* s = static_cast<PngSource*>(png_get_error_ptr(p));
        std::snprintf(s->message, sizeof s->message, "%s", message);
        png_longjmp(p, 1);
      },
      [](png_structp, png_const_charp) {});
  if (!png) {
    std::snprintf(source.message, sizeof source.message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return false;
  }
  png_set_read_fn(png, &source, [](png_structp p, png_bytep data, png_size_t n) {
    auto* s = static_cast<PngSource*>(png_get_io_ptr(p));
    if (n > s->size - s->at) png_error(p, "the file ends early (truncated)");
    std::memcpy(data, s->data + s->at, n);
    s->at += n;
  });
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (static_cast<long long>(width) * height > kMaxPixels) png_error(png, "too many pixels (a decompression bomb)");
  const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16) png_set_strip_16(png);
  if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<png_size_t>(width) * 3) png_error(png, "unexpected row layout");
  out.width = static_cast<int>(width);
  out.height = static_cast<int>(height);
  out.rgb.resize(static_cast<std::size_t>(width) * height * 3);
  for (int pass = 0; pass < passes; ++pass)
    for (png_uint_32 y = 0; y < height; ++y)
      png_read_row(png, out.rgb.data() + static_cast<std::size_t>(y) * width * 3, nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

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
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
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
  // CMYK rows land in libjpeg's own pool (freed by jpeg_destroy_decompress, so nothing leaks on a longjmp).
  JSAMPARRAY cmyk_rows =
      cmyk ? (*cinfo.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&cinfo), JPOOL_IMAGE, cinfo.output_width * 4, 16)
           : nullptr;
  JSAMPROW rows[16];
  while (cinfo.output_scanline < static_cast<JDIMENSION>(bottom)) {
    const int first = static_cast<int>(cinfo.output_scanline) - top;
    const int n = std::min(16, bottom - static_cast<int>(cinfo.output_scanline));
    for (int i = 0; i < n; ++i)
      rows[i] = cmyk ? cmyk_rows[i] : out.rgb.data() + static_cast<std::size_t>(first + i) * stride;
    const auto got = static_cast<int>(jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(n)));
    for (int i = 0; cmyk && i < got; ++i)
      cmyk_to_rgb(cmyk_rows[i], out.rgb.data() + static_cast<std::size_t>(first + i) * stride,
                  static_cast<std::size_t>(out.width));
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
    check_pixel_count(width, height, "JPEG");
    return {width, height};
  }
  if (format == ImageFormat::png) {
    PngImage png;
    png.begin(bytes);
    check_pixel_count(png.image.width, png.image.height, "PNG");
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
    const std::size_t pixels = static_cast<std::size_t>(out.width) * out.height;
    out.rgb.resize(pixels * 3);
    int width = 0, height = 0, subsampling = 0, colorspace = 0;
    const bool cmyk = tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &width,
                                          &height, &subsampling, &colorspace) == 0 &&
                      (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK);
    // libturbojpeg decodes CMYK and YCCK only to CMYK pixels ("Unsupported color conversion" to RGB).
    if (cmyk) cmyk_.resize(pixels * 4);
    if (tjDecompress2(handle, bytes.data(), static_cast<unsigned long>(bytes.size()),
                      cmyk ? cmyk_.data() : out.rgb.data(), out.width, out.width * (cmyk ? 4 : 3), out.height,
                      cmyk ? TJPF_CMYK : TJPF_RGB, 0) != 0 &&
        is_fatal(handle))
      throw jpeg_error(jpeg_);
    if (cmyk) cmyk_to_rgb(cmyk_.data(), out.rgb.data(), pixels);
    return;
  }
  if (format == ImageFormat::png) {
    PngSource source;
    if (!read_png_rgb(bytes, out, source)) throw DecodeError(std::string("PNG: ") + source.message);
    return;
  }
  throw DecodeError("not a JPEG or PNG file");
}

}  // namespace gpusage::pipeline
