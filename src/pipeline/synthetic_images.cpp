#include "pipeline/synthetic_images.hpp"

#include <fmt/format.h>
#include <png.h>
#include <turbojpeg.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
// libjpeg's header wants FILE and size_t declared first.
#include <jpeglib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "pipeline/random.hpp"

namespace gpusage::pipeline {
namespace {

using Color = std::array<float, 3>;

Color random_color(Rng& rng) {
  return {static_cast<float>(rng.uniform(20, 235)), static_cast<float>(rng.uniform(20, 235)),
          static_cast<float>(rng.uniform(20, 235))};
}

// Value noise: random values on a lattice of `cell` pixels, smoothly interpolated; range [-1, 1].
class ValueNoise {
 public:
  ValueNoise(int width, int height, int cell, Rng& rng)
      : cell_(cell), columns_(width / cell + 2), values_(static_cast<std::size_t>(columns_) * (height / cell + 2)) {
    for (auto& v : values_) v = static_cast<float>(rng.uniform(-1, 1));
  }
  float at(int x, int y) const {
    const int cx = x / cell_, cy = y / cell_;
    const float fx = smooth(static_cast<float>(x % cell_) / cell_), fy = smooth(static_cast<float>(y % cell_) / cell_);
    const float* row0 = values_.data() + static_cast<std::size_t>(cy) * columns_ + cx;
    const float* row1 = row0 + columns_;
    const float top = row0[0] + (row0[1] - row0[0]) * fx;
    const float bottom = row1[0] + (row1[1] - row1[0]) * fx;
    return top + (bottom - top) * fy;
  }

 private:
  static float smooth(float t) { return t * t * (3 - 2 * t); }
  int cell_;
  int columns_;
  std::vector<float> values_;
};

struct Ellipse {
  float cx, cy, rx, ry;
  Color color, shade;  // colour at the centre, change per radius towards the edge
};

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

}  // namespace

std::vector<std::uint8_t> synthesize_photo(int width, int height, std::uint64_t seed) {
  Rng rng = Rng::keyed(seed, 0x70686f746full);  // "photo"
  const Color sky_top = random_color(rng), sky_bottom = random_color(rng);
  const Color ground_top = random_color(rng), ground_bottom = random_color(rng);
  const float horizon = static_cast<float>(rng.uniform(0.3, 0.7)) * height;
  std::vector<Ellipse> shapes(static_cast<std::size_t>(rng.randint(4, 10)));
  for (auto& e : shapes) {
    e.cx = static_cast<float>(rng.uniform(0, width));
    e.cy = static_cast<float>(rng.uniform(0, height));
    e.rx = static_cast<float>(rng.uniform(0.05, 0.35)) * width;
    e.ry = static_cast<float>(rng.uniform(0.05, 0.35)) * height;
    e.color = random_color(rng);
    for (auto& s : e.shade) s = static_cast<float>(rng.uniform(-60, 20));
  }
  // Texture at three scales (object, surface, grain), luminance mostly, a little colour.
  const ValueNoise coarse(width, height, 48, rng), medium(width, height, 9, rng), fine(width, height, 2, rng);
  const ValueNoise tint(width, height, 24, rng);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const bool sky = y < horizon;
    const float t = sky ? y / horizon : (y - horizon) / (height - horizon);
    const Color& a = sky ? sky_top : ground_top;
    const Color& b = sky ? sky_bottom : ground_bottom;
    for (int x = 0; x < width; ++x) {
      Color c{a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t};
      for (const auto& e : shapes) {  // later shapes in front
        const float dx = (x - e.cx) / e.rx, dy = (y - e.cy) / e.ry;
        const float r2 = dx * dx + dy * dy;
        if (r2 < 1.0f) {
          const float r = std::sqrt(r2);
          for (int k = 0; k < 3; ++k) c[k] = e.color[k] + e.shade[k] * r;
        }
      }
      const float luminance = 28 * coarse.at(x, y) + 24 * medium.at(x, y) + 44 * fine.at(x, y);
      const float chroma = 10 * tint.at(x, y);
      const float grain = static_cast<float>(rng.uniform(-26, 26));  // sensor noise
      std::uint8_t* p = rgb.data() + (static_cast<std::size_t>(y) * width + x) * 3;
      const std::array<float, 3> add{luminance + chroma, luminance, luminance - chroma};
      for (int k = 0; k < 3; ++k) p[k] = static_cast<std::uint8_t>(std::clamp(c[k] + add[k] + grain, 0.0f, 255.0f));
    }
  }
  return rgb;
}

std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& rgb, int width, int height, int quality) {
  tjhandle handle = tjInitCompress();
  if (!handle) throw std::runtime_error("tjInitCompress failed");
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int rc =
      tjCompress2(handle, rgb.data(), width, width * 3, height, TJPF_RGB, &buffer, &size, TJSAMP_420, quality, 0);
  std::string error = rc != 0 ? tjGetErrorStr2(handle) : "";
  tjDestroy(handle);
  if (rc != 0) {
    tjFree(buffer);
    throw std::runtime_error("tjCompress2: " + error);
  }
  std::vector<std::uint8_t> bytes(buffer, buffer + size);
  tjFree(buffer);
  return bytes;
}

std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& pixels, int width, int height, int quality,
                                      JpegPixels kind) {
  // libjpeg's error callback must not return, and an exception may not unwind through C: longjmp back here.
  struct Errors {
    jpeg_error_mgr manager;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
  } errors;
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = [](j_common_ptr c) {
    auto* e = reinterpret_cast<Errors*>(c->err);
    (*c->err->format_message)(c, e->message);
    std::longjmp(e->jump, 1);
  };
  if (setjmp(errors.jump)) {
    jpeg_destroy_compress(&cinfo);
    throw std::runtime_error(std::string("libjpeg: ") + errors.message);
  }
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = kind == JpegPixels::gray ? 1 : 4;
  cinfo.in_color_space = kind == JpegPixels::gray ? JCS_GRAYSCALE : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_set_colorspace(&cinfo, kind == JpegPixels::gray   ? JCS_GRAYSCALE
                              : kind == JpegPixels::cmyk ? JCS_CMYK
                                                         : JCS_YCCK);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const auto stride = static_cast<std::size_t>(width) * static_cast<std::size_t>(cinfo.input_components);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels.data() + cinfo.next_scanline * stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<std::uint8_t> bytes(buffer, buffer + size);
  std::free(buffer);
  return bytes;
}

std::vector<std::uint8_t> encode_png16(const std::vector<std::uint16_t>& rgb, int width, int height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  // libpng's simplified writer stores 16-bit data as linear light (with a gAMA chunk); the raw writer below
  // stores the values as they are, with no gamma, which is what 16-bit files in the wild mostly carry.
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) throw std::runtime_error("png_create_write_struct failed");
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> row(static_cast<std::size_t>(width) * 6);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("PNG: cannot write a 16-bit image");
  }
  png_set_write_fn(
      png, &bytes,
      [](png_structp p, png_bytep data, png_size_t n) {
        auto* out = static_cast<std::vector<std::uint8_t>*>(png_get_io_ptr(p));
        out->insert(out->end(), data, data + n);
      },
      nullptr);
  png_set_IHDR(png, info, image.width, image.height, 16, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    for (int i = 0; i < width * 3; ++i) {  // PNG samples are big-endian
      const std::uint16_t v = rgb[static_cast<std::size_t>(y) * width * 3 + i];
      row[2 * i] = static_cast<std::uint8_t>(v >> 8);
      row[2 * i + 1] = static_cast<std::uint8_t>(v & 0xFF);
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return bytes;
}

std::vector<std::uint8_t> encode_png(const std::vector<std::uint8_t>& rgb, int width, int height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  std::vector<std::uint8_t> bytes(size);
  if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, rgb.data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  bytes.resize(size);
  return bytes;
}

JpegFolderSummary write_jpeg_folder(const std::string& root, const JpegFolderSpec& spec) {
  namespace fs = std::filesystem;
  JpegFolderSummary summary;
  for (int c = 0; c < spec.classes; ++c) fs::create_directories(fs::path(root) / fmt::format("class_{:03}", c));
  for (int i = 0; i < spec.images; ++i) {
    Rng rng = Rng::keyed(spec.seed, 0x73697a65ull, static_cast<std::uint64_t>(i));  // "size"
    int w = spec.width, h = spec.height;
    if (spec.vary_size) {
      w = std::max(8, static_cast<int>(w * rng.uniform(0.8, 1.2)));
      h = std::max(8, static_cast<int>(h * rng.uniform(0.8, 1.2)));
      if (rng.randint(0, 3) == 0) std::swap(w, h);
    }
    const auto bytes =
        encode_jpeg(synthesize_photo(w, h, spec.seed * 1000003u + static_cast<std::uint64_t>(i)), w, h, spec.quality);
    write_bytes(fs::path(root) / fmt::format("class_{:03}", i % spec.classes) / fmt::format("img_{:05}.jpg", i), bytes);
    ++summary.images;
    summary.bytes += static_cast<std::int64_t>(bytes.size());
  }
  return summary;
}

}  // namespace gpusage::pipeline
