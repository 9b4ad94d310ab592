// The training transforms of torchvision's ImageNet recipe, in the order it applies them:
// RandomResizedCrop(size) -> RandomHorizontalFlip() -> ToTensor() -> Normalize(mean, std),
// fused into one pass that reads the decoded pixels of the crop and writes normalised float32 CHW.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpusage::pipeline {

// torchvision's (i, j, h, w): top row, left column, height, width, in pixels of the image.
struct CropBox {
  int top = 0;
  int left = 0;
  int height = 0;
  int width = 0;
  friend bool operator==(const CropBox&, const CropBox&) = default;
};

// RandomResizedCrop's defaults (torchvision/transforms/transforms.py, 0.14).
struct CropParams {
  double scale_min = 0.08;
  double scale_max = 1.0;
  double ratio_min = 3.0 / 4.0;
  double ratio_max = 4.0 / 3.0;
  int attempts = 10;
};

// Python's round(): halves to even, as std::nearbyint does in the default rounding mode.
inline int python_round(double x) { return static_cast<int>(std::nearbyint(x)); }

// RandomResizedCrop.get_params, line for line: up to `attempts` draws of an area fraction (uniform) and
// an aspect ratio (log-uniform), the first that fits wins; else the centre crop with the ratio clamped.
// `Random` gives uniform(lo, hi) in [lo, hi) and randint(lo, hi) in [lo, hi] (pipeline::Rng does).
template <class Random>
CropBox random_resized_crop(int height, int width, const CropParams& p, Random& rng) {
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(p.ratio_min), log_max = std::log(p.ratio_max);
  for (int attempt = 0; attempt < p.attempts; ++attempt) {
    const double target_area = area * rng.uniform(p.scale_min, p.scale_max);
    const double aspect = std::exp(rng.uniform(log_min, log_max));
    const int w = python_round(std::sqrt(target_area * aspect));
    const int h = python_round(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int top = rng.randint(0, height - h);
      const int left = rng.randint(0, width - w);
      return {top, left, h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < p.ratio_min) {
    h = python_round(w / p.ratio_min);
  } else if (in_ratio > p.ratio_max) {
    w = python_round(h * p.ratio_max);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

// transforms.Normalize with the ImageNet statistics torchvision's reference scripts use.
struct Normalization {
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

// Interleaved 8-bit RGB pixels.
struct ImageView {
  const std::uint8_t* rgb = nullptr;
  int width = 0;
  int height = 0;
  std::size_t stride_bytes = 0;  // bytes from one row to the next
};

// A rectangle of an image in (fractional) pixel coordinates: [x0, x1) x [y0, y1).
struct Region {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// The taps of one axis of a resample: output i reads inputs first[i] .. first[i] + count[i] - 1 with
// weights[i * taps + k].
struct AxisWeights {
  int taps = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;
};

// Pillow's bilinear resample of [in0, in1) of an axis of `in_size` pixels onto `out_size` pixels
// (Pillow src/libImaging/Resample.c, precompute_coeffs): a triangle filter widened by the downscale
// factor, so that shrinking averages every input pixel (antialiasing) as PIL's Image.resize does for
// torchvision's PIL path; when enlarging it is plain linear interpolation.
AxisWeights bilinear_weights(int in_size, double in0, double in1, int out_size);

// Resamples `region` of `image` to out_size x out_size, mirrors it left-right when `flip`, and writes
// (value / 255 - mean) / std as float32 planes R, G, B to `out` (3 * out_size * out_size floats).
// Keeps its scratch buffers between calls: one per thread.
class Resampler {
 public:
  void resize_normalize(const ImageView& image, const Region& region, int out_size, bool flip,
                        const Normalization& normalization, float* out);

 private:
  AxisWeights x_, y_;
  std::vector<float> line_;  // one vertically resampled row of the crop, interleaved RGB
};

}  // namespace gpusage::pipeline
