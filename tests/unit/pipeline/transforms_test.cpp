#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pipeline/random.hpp"
#include "pipeline/transforms.hpp"

namespace gpusage::pipeline {
namespace {

// Hands out scripted draws and records the ranges they were asked for.
struct ScriptedRng {
  ScriptedRng(std::vector<double> u, std::vector<int> n) : uniforms(std::move(u)), ints(std::move(n)) {}
  std::vector<double> uniforms;
  std::vector<int> ints;
  std::size_t u = 0, i = 0;
  std::vector<std::pair<int, int>> int_ranges;
  double uniform(double, double) { return uniforms.at(u++); }
  int randint(int lo, int hi) {
    int_ranges.emplace_back(lo, hi);
    return ints.at(i++);
  }
};

TEST(RandomResizedCrop, TakesTheFirstDrawThatFitsAndPlacesItUniformly) {
  // 500 x 375, area fraction 0.5 -> 93750 px; aspect 4/3 -> w = round(sqrt(125000)) = round(353.55) = 354,
  // h = round(sqrt(70312.5)) = round(265.17) = 265; top in [0, 110], left in [0, 146].
  ScriptedRng rng{{0.5, std::log(4.0 / 3.0)}, {7, 100}};
  EXPECT_EQ(random_resized_crop(375, 500, CropParams{}, rng), (CropBox{7, 100, 265, 354}));
  ASSERT_EQ(rng.int_ranges.size(), 2u);
  EXPECT_EQ(rng.int_ranges[0], std::make_pair(0, 110));
  EXPECT_EQ(rng.int_ranges[1], std::make_pair(0, 146));
}

TEST(RandomResizedCrop, RedrawsWhenTheCropDoesNotFit) {
  // 100 x 100: the whole area at 4/3 is 115 px wide (too wide); then a quarter at 1:1 is 50 x 50.
  ScriptedRng rng{{1.0, std::log(4.0 / 3.0), 0.25, 0.0}, {0, 50}};
  EXPECT_EQ(random_resized_crop(100, 100, CropParams{}, rng), (CropBox{0, 50, 50, 50}));
  EXPECT_EQ(rng.u, 4u);
}

TEST(RandomResizedCrop, FallsBackToTheCentreCropClampedToTheRatioRange) {
  // Ten draws that never fit, then torchvision's fallback.
  std::vector<double> wide_draws, tall_draws;
  for (int k = 0; k < 10; ++k) {
    wide_draws.insert(wide_draws.end(), {1.0, std::log(4.0 / 3.0)});  // 231 x 173 on a 400 x 100 image
    tall_draws.insert(tall_draws.end(), {1.0, std::log(3.0 / 4.0)});  // 173 x 231 on a 100 x 400 image
  }
  ScriptedRng wide{wide_draws, {}};
  // 400 wide, 100 high: ratio 4 > 4/3, so h = 100 and w = round(100 * 4/3) = 133, centred: left (400-133)//2.
  EXPECT_EQ(random_resized_crop(100, 400, CropParams{}, wide), (CropBox{0, 133, 100, 133}));
  ScriptedRng tall{tall_draws, {}};
  // 100 wide, 400 high: ratio 1/4 < 3/4, so w = 100 and h = round(100 / (3/4)) = 133.
  EXPECT_EQ(random_resized_crop(400, 100, CropParams{}, tall), (CropBox{133, 0, 133, 100}));
  EXPECT_TRUE(wide.int_ranges.empty());
}

TEST(RandomResizedCrop, RoundsHalvesToEvenAsPythonDoes) {
  EXPECT_EQ(python_round(2.5), 2);
  EXPECT_EQ(python_round(3.5), 4);
  EXPECT_EQ(python_round(264.5), 264);
  EXPECT_EQ(python_round(265.17), 265);
}

TEST(RandomResizedCrop, RealDrawsStayInsideTheImageWithinTheScaleRange) {
  Rng rng(42);
  for (int n = 0; n < 2000; ++n) {
    const CropBox b = random_resized_crop(375, 500, CropParams{}, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_LE(b.top + b.height, 375);
    ASSERT_LE(b.left + b.width, 500);
    const double fraction = static_cast<double>(b.width) * b.height / (500.0 * 375.0);
    ASSERT_GT(fraction, 0.07);  // 0.08 less rounding
    ASSERT_LE(fraction, 1.0);
  }
}

TEST(BilinearWeights, ShrinkingAveragesEveryPixelWithPillowsWidenedTriangle) {
  // 4 -> 2: scale 2, support 2. Output 0 is centred at 1.0 and reads inputs 0..2 with triangle weights
  // 0.75, 0.75, 0.25 (normalised 3/7, 3/7, 1/7); output 1 reads 1..3 with 1/7, 3/7, 3/7.
  const AxisWeights a = bilinear_weights(4, 0, 4, 2);
  ASSERT_EQ(a.first, (std::vector<int>{0, 1}));
  ASSERT_EQ(a.count, (std::vector<int>{3, 3}));
  EXPECT_FLOAT_EQ(a.weights[0], 3.0f / 7);
  EXPECT_FLOAT_EQ(a.weights[1], 3.0f / 7);
  EXPECT_FLOAT_EQ(a.weights[2], 1.0f / 7);
  EXPECT_FLOAT_EQ(a.weights[a.taps + 0], 1.0f / 7);
  EXPECT_FLOAT_EQ(a.weights[a.taps + 2], 3.0f / 7);
}

TEST(BilinearWeights, EnlargingInterpolatesLinearly) {
  // 2 -> 4: centres 0.25, 0.75, 1.25, 1.75: [a, .75a + .25b, .25a + .75b, b] (Pillow gives [0, 50, 150, 200]
  // for a = 0, b = 200).
  const AxisWeights a = bilinear_weights(2, 0, 2, 4);
  EXPECT_EQ(a.count, (std::vector<int>{1, 2, 2, 1}));
  EXPECT_FLOAT_EQ(a.weights[0], 1.0f);
  EXPECT_FLOAT_EQ(a.weights[a.taps], 0.75f);
  EXPECT_FLOAT_EQ(a.weights[a.taps + 1], 0.25f);
  EXPECT_EQ(a.first[3], 1);
  EXPECT_FLOAT_EQ(a.weights[3 * a.taps], 1.0f);
}

// A 4 x 4 image: red = 70 x, green = 70 y, blue = 100.
std::vector<std::uint8_t> ramp_image() {
  std::vector<std::uint8_t> rgb(4 * 4 * 3);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      std::uint8_t* p = &rgb[(y * 4 + x) * 3];
      p[0] = static_cast<std::uint8_t>(70 * x);
      p[1] = static_cast<std::uint8_t>(70 * y);
      p[2] = 100;
    }
  return rgb;
}

// Normalisation that leaves pixel values as they are: (v / 255 - 0) / (1 / 255) = v.
Normalization identity() { return {{0, 0, 0}, {1.0f / 255, 1.0f / 255, 1.0f / 255}}; }

TEST(ResizeNormalize, ShrinksBothAxesAndWritesPlanarChannels) {
  const auto rgb = ramp_image();
  Resampler r;
  std::vector<float> out(3 * 2 * 2);
  r.resize_normalize({rgb.data(), 4, 4, 12}, {0, 0, 4, 4}, 2, false, identity(), out.data());
  // Red across: [0, 70, 140, 210] -> [50, 160] (Pillow: the same); green the same down; blue stays 100.
  const std::vector<float> expected{50, 160, 50, 160, 50, 50, 160, 160, 100, 100, 100, 100};
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-3) << i;
}

TEST(ResizeNormalize, FlipMirrorsEachRow) {
  const auto rgb = ramp_image();
  Resampler r;
  std::vector<float> out(3 * 2 * 2);
  r.resize_normalize({rgb.data(), 4, 4, 12}, {0, 0, 4, 4}, 2, true, identity(), out.data());
  EXPECT_NEAR(out[0], 160, 1e-3);
  EXPECT_NEAR(out[1], 50, 1e-3);
  EXPECT_NEAR(out[4], 50, 1e-3);  // green does not change across a row
  EXPECT_NEAR(out[6], 160, 1e-3);
}

TEST(ResizeNormalize, ReadsOnlyTheRegion) {
  // The right half (x in [2, 4)) at its own size: red 140, 210.
  const auto rgb = ramp_image();
  Resampler r;
  std::vector<float> out(3 * 2 * 2);
  r.resize_normalize({rgb.data(), 4, 4, 12}, {2, 0, 4, 2}, 2, false, identity(), out.data());
  EXPECT_NEAR(out[0], 140, 1e-3);
  EXPECT_NEAR(out[1], 210, 1e-3);
  EXPECT_NEAR(out[4], 0, 1e-3);  // green row 0
  EXPECT_NEAR(out[6], 70, 1e-3);
}

TEST(ResizeNormalize, AppliesToTensorAndImageNetNormalize) {
  const std::vector<std::uint8_t> rgb{255, 0, 128};
  Resampler r;
  std::vector<float> out(3);
  r.resize_normalize({rgb.data(), 1, 1, 3}, {0, 0, 1, 1}, 1, false, Normalization{}, out.data());
  EXPECT_NEAR(out[0], (1.0 - 0.485) / 0.229, 1e-5);          // 2.2489
  EXPECT_NEAR(out[1], (0.0 - 0.456) / 0.224, 1e-5);          // -2.0357
  EXPECT_NEAR(out[2], (128.0 / 255 - 0.406) / 0.225, 1e-5);  // 0.4265
}

TEST(SampleRng, KeyedStreamsAreReproducibleAndDistinct) {
  Rng a = Rng::keyed(7, 1, 2), b = Rng::keyed(7, 1, 2), c = Rng::keyed(7, 2, 1);
  const auto first = a.next();
  EXPECT_EQ(first, b.next());
  EXPECT_NE(first, c.next());
  Rng u(3);
  for (int n = 0; n < 1000; ++n) {
    const double x = u.uniform01();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    const int k = u.randint(-2, 2);
    ASSERT_GE(k, -2);
    ASSERT_LE(k, 2);
  }
}

}  // namespace
}  // namespace gpusage::pipeline
