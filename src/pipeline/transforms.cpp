#include "pipeline/transforms.hpp"

#include <algorithm>

namespace gpusage::pipeline {

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

void Resampler::resize_normalize(const ImageView& image, const Region& region, int out_size, bool flip,
                                 const Normalization& normalization, float* out) {
  x_ = bilinear_weights(image.width, region.x0, region.x1, out_size);
  y_ = bilinear_weights(image.height, region.y0, region.y1, out_size);
  // Horizontal pass first (as Pillow does), over the rows the vertical taps touch.
  const int row_lo = y_.first.front();
  const int row_hi = y_.first.back() + y_.count.back();
  const std::size_t row_floats = static_cast<std::size_t>(out_size) * 3;
  rows_.resize(static_cast<std::size_t>(std::max(row_hi - row_lo, 0)) * row_floats);
  for (int y = row_lo; y < row_hi; ++y) {
    const std::uint8_t* in = image.rgb + static_cast<std::size_t>(y) * image.stride_bytes;
    float* dst = rows_.data() + static_cast<std::size_t>(y - row_lo) * row_floats;
    for (int x = 0; x < out_size; ++x) {
      const float* w = x_.weights.data() + static_cast<std::size_t>(x) * x_.taps;
      const std::uint8_t* p = in + static_cast<std::size_t>(x_.first[x]) * 3;
      float r = 0, g = 0, b = 0;
      for (int k = 0; k < x_.count[x]; ++k, p += 3) {
        r += w[k] * p[0];
        g += w[k] * p[1];
        b += w[k] * p[2];
      }
      dst[3 * x] = r;
      dst[3 * x + 1] = g;
      dst[3 * x + 2] = b;
    }
  }
  // Vertical pass, then ToTensor's / 255 and Normalize folded into one multiply-add per value.
  std::array<float, 3> gain{}, offset{};
  for (int c = 0; c < 3; ++c) {
    gain[c] = 1.0f / (255.0f * normalization.std[c]);
    offset[c] = -normalization.mean[c] / normalization.std[c];
  }
  const std::size_t plane = static_cast<std::size_t>(out_size) * out_size;
  line_.resize(row_floats);
  for (int y = 0; y < out_size; ++y) {
    std::fill(line_.begin(), line_.end(), 0.0f);
    const float* w = y_.weights.data() + static_cast<std::size_t>(y) * y_.taps;
    for (int k = 0; k < y_.count[y]; ++k) {
      const float* src = rows_.data() + static_cast<std::size_t>(y_.first[y] + k - row_lo) * row_floats;
      const float wk = w[k];
      for (std::size_t i = 0; i < row_floats; ++i) line_[i] += wk * src[i];
    }
    for (int c = 0; c < 3; ++c) {
      float* dst = out + c * plane + static_cast<std::size_t>(y) * out_size;
      for (int x = 0; x < out_size; ++x) {
        const int to = flip ? out_size - 1 - x : x;
        dst[to] = line_[3 * static_cast<std::size_t>(x) + c] * gain[c] + offset[c];
      }
    }
  }
}

}  // namespace gpusage::pipeline
