#include "pipeline/transforms.hpp"

#include <algorithm>
#include <cstring>

namespace gpusage::pipeline {
namespace {
// Four floats as one SIMD register (GCC and Clang vector extensions: SSE on x86-64, NEON on ARM).
typedef float Lanes __attribute__((vector_size(16)));
}  // namespace

AxisWeights bilinear_weights(int in_size, double in0, double in1, int out_size) {
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // the bilinear (triangle) filter's support is 1
  AxisWeights a;
  a.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  a.first.resize(out_size);
  a.count.resize(out_size);
  a.weights.assign(static_cast<std::size_t>(out_size) * a.taps, 0.0f);
  for (int i = 0; i < out_size; ++i) {
    const double center = in0 + (i + 0.5) * scale;
    // Pillow rounds with (int)(x + 0.5), truncation toward zero, then clamps to the image.
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    const int n = std::max(hi - lo, 0);
    const int kept = std::min(n, a.taps);
    float* w = a.weights.data() + static_cast<std::size_t>(i) * a.taps;
    double total = 0;
    for (int k = 0; k < kept; ++k) {
      const double x = std::abs((lo + k - center + 0.5) / filter_scale);
      w[k] = static_cast<float>(x < 1.0 ? 1.0 - x : 0.0);
      total += w[k];
    }
    if (total != 0)
      for (int k = 0; k < kept; ++k) w[k] = static_cast<float>(w[k] / total);
    a.first[i] = lo;
    a.count[i] = kept;
  }
  return a;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
// An AVX2 build of the loops where the CPU has it (x86-64 since 2013), chosen at load time; SSE2 otherwise.
// Not under sanitizers: the load-time resolver would run before their runtime is up.
#define GPUSAGE_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPUSAGE_VECTOR_CLONES
#endif

GPUSAGE_VECTOR_CLONES void Resampler::resize_normalize(const ImageView& image, const Region& region, int out_size,
                                                       bool flip, const Normalization& normalization, float* out) {
  x_ = bilinear_weights(image.width, region.x0, region.x1, out_size);
  y_ = bilinear_weights(image.height, region.y0, region.y1, out_size);
  std::array<float, 3> gain{}, offset{};
  for (int c = 0; c < 3; ++c) {  // ToTensor's / 255 and Normalize folded into one multiply-add
    gain[c] = 1.0f / (255.0f * normalization.std[c]);
    offset[c] = -normalization.mean[c] / normalization.std[c];
  }
  // Vertical pass first, straight from the 8-bit rows over the crop's columns: a contiguous
  // multiply-add the compiler vectorises. Pillow goes horizontal first; in floating point the order
  // changes nothing but rounding, and this way the gather-like horizontal pass runs on out_size rows
  // only.
  const int col_lo = x_.first.front();
  const int col_hi = x_.first.back() + x_.count.back();
  const std::size_t span = static_cast<std::size_t>(std::max(col_hi - col_lo, 0)) * 3;
  line_.resize(span + 1);
  line_[span] = 0.0f;
  const std::size_t plane = static_cast<std::size_t>(out_size) * out_size;
  for (int y = 0; y < out_size; ++y) {
    float* line = line_.data();
    const float* wy = y_.weights.data() + static_cast<std::size_t>(y) * y_.taps;
    for (int k = 0; k < y_.count[y]; ++k) {
      const std::uint8_t* src = image.rgb + static_cast<std::size_t>(y_.first[y] + k) * image.stride_bytes +
                                static_cast<std::size_t>(col_lo) * 3;
      const float wk = wy[k];
      if (k == 0) {
        for (std::size_t i = 0; i < span; ++i) line[i] = wk * static_cast<float>(src[i]);
      } else {
        for (std::size_t i = 0; i < span; ++i) line[i] += wk * static_cast<float>(src[i]);
      }
    }
    float* r_out = out + static_cast<std::size_t>(y) * out_size;
    float* g_out = r_out + plane;
    float* b_out = g_out + plane;
    for (int x = 0; x < out_size; ++x) {
      const float* wx = x_.weights.data() + static_cast<std::size_t>(x) * x_.taps;
      const float* p = line + static_cast<std::size_t>(x_.first[x] - col_lo) * 3;
      // One 4-lane multiply-add per tap: lanes R, G, B and the next pixel's R (ignored; the line has
      // one float of padding for the last pixel).
      Lanes sum{0, 0, 0, 0};
      for (int k = 0; k < x_.count[x]; ++k, p += 3) {
        Lanes v;
        std::memcpy(&v, p, sizeof v);
        sum += wx[k] * v;
      }
      const int to = flip ? out_size - 1 - x : x;
      r_out[to] = sum[0] * gain[0] + offset[0];
      g_out[to] = sum[1] * gain[1] + offset[1];
      b_out[to] = sum[2] * gain[2] + offset[2];
    }
  }
}

}  // namespace gpusage::pipeline
