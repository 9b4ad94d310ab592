#include <gtest/gtest.h>

#include <cstdlib>

#include "pipeline/decode.hpp"
#include "pipeline/synthetic_images.hpp"
#include "pipeline/transforms.hpp"

namespace gpusage::pipeline {
namespace {

double mean_abs_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::abs(a[i] - b[i]);
  return sum / static_cast<double>(a.size());
}

TEST(ScaledDecoding, ChoosesTheSmallestFactorThatStillCoversTheOutput) {
  const auto& f = jpeg_scaling_factors();
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(choose_scaling(448, 448, 224, f), (ScalingFactor{1, 2}));   // exactly half
  EXPECT_EQ(choose_scaling(300, 300, 224, f), (ScalingFactor{3, 4}));   // 224/300 = 0.747 -> 6/8
  EXPECT_EQ(choose_scaling(1792, 1800, 224, f), (ScalingFactor{1, 8}));
  EXPECT_EQ(choose_scaling(500, 224, 224, f), (ScalingFactor{1, 1}));   // the short side decides
  EXPECT_EQ(choose_scaling(120, 90, 224, f), (ScalingFactor{1, 1}));    // never enlarges
}

TEST(ScaledDecoding, TheLoaderOnlyUsesTheFactorsWithSimdInverseDcts) {
  const auto& fast = fast_jpeg_scaling_factors();
  EXPECT_EQ(fast, (std::vector<ScalingFactor>{{1, 1}, {1, 2}, {1, 4}, {1, 8}}));
  EXPECT_EQ(choose_scaling(300, 300, 224, fast), (ScalingFactor{1, 1}));  // 3/4 would cost more than 1/1
  EXPECT_EQ(choose_scaling(460, 500, 224, fast), (ScalingFactor{1, 2}));
  EXPECT_EQ(choose_scaling(1000, 900, 224, fast), (ScalingFactor{1, 4}));
}

TEST(ScaledDecoding, ScaledSidesRoundUpAsLibjpegDoes) {
  EXPECT_EQ(scaled_dimension(375, {3, 8}), 141);  // ceil(140.625)
  EXPECT_EQ(scaled_dimension(500, {1, 2}), 250);
  EXPECT_EQ(scaled_dimension(375, {1, 2}), 188);
}

TEST(Decode, SniffsTheFormatFromTheBytesNotTheName) {
  const auto rgb = synthesize_photo(16, 8, 1);
  EXPECT_EQ(sniff_format(encode_jpeg(rgb, 16, 8, 90)), ImageFormat::jpeg);
  EXPECT_EQ(sniff_format(encode_png(rgb, 16, 8)), ImageFormat::png);
  const std::vector<std::uint8_t> text{'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(sniff_format(text), ImageFormat::unknown);
  EXPECT_EQ(sniff_format({}), ImageFormat::unknown);
}

TEST(Decode, JpegRoundTripsCloselyAndScalesInTheDctDomain) {
  const auto rgb = synthesize_photo(64, 48, 2);
  const auto jpeg = encode_jpeg(rgb, 64, 48, 95);
  Decoder d;
  const ImageSize size = d.size(jpeg, ImageFormat::jpeg);
  EXPECT_EQ(size.width, 64);
  EXPECT_EQ(size.height, 48);
  DecodedImage full;
  d.decode(jpeg, ImageFormat::jpeg, {1, 1}, full);
  ASSERT_EQ(full.rgb.size(), rgb.size());
  // Lossy (4:2:0 chroma, sensor noise), but far closer to its source than to another image.
  const double error = mean_abs_difference(full.rgb, rgb);
  EXPECT_LT(error, 10.0);
  EXPECT_LT(error, 0.25 * mean_abs_difference(full.rgb, synthesize_photo(64, 48, 3)));
  DecodedImage half;
  d.decode(jpeg, ImageFormat::jpeg, {1, 2}, half);
  EXPECT_EQ(half.width, 32);
  EXPECT_EQ(half.height, 24);
  EXPECT_EQ(half.rgb.size(), 32u * 24 * 3);
}

TEST(Decode, PngIsLossless) {
  const auto rgb = synthesize_photo(20, 10, 3);
  Decoder d;
  DecodedImage out;
  d.decode(encode_png(rgb, 20, 10), ImageFormat::png, {1, 1}, out);
  EXPECT_EQ(out.width, 20);
  EXPECT_EQ(out.height, 10);
  EXPECT_EQ(out.rgb, rgb);
}

TEST(Decode, TruncatedJpegIsAnError) {
  const auto jpeg = encode_jpeg(synthesize_photo(64, 64, 4), 64, 64, 90);
  const std::vector<std::uint8_t> truncated(jpeg.begin(), jpeg.begin() + static_cast<long>(jpeg.size() / 2));
  Decoder d;
  DecodedImage out;
  EXPECT_NO_THROW(d.size(truncated, ImageFormat::jpeg));  // the header is intact
  EXPECT_THROW(d.decode(truncated, ImageFormat::jpeg, {1, 1}, out), DecodeError);
}

TEST(Decode, AGoodFileDecodesAfterABadOneOnTheSameDecoder) {
  // libturbojpeg 2.1 leaves a handle whose decode failed unable to read the next file; Decoder renews it.
  const auto good = encode_jpeg(synthesize_photo(32, 32, 5), 32, 32, 90);
  const std::vector<std::uint8_t> truncated(good.begin(), good.begin() + 300);
  Decoder d;
  DecodedImage out;
  EXPECT_THROW(d.decode(truncated, ImageFormat::jpeg, {1, 1}, out), DecodeError);
  EXPECT_NO_THROW(d.decode(good, ImageFormat::jpeg, {1, 1}, out));
  EXPECT_EQ(out.width, 32);
}

TEST(Decode, RegionDecodingGivesTheFullDecodesPixelsInsideTheBox) {
  const auto jpeg = encode_jpeg(synthesize_photo(200, 150, 7), 200, 150, 90);
  Decoder d;
  for (const ScalingFactor f : {ScalingFactor{1, 1}, ScalingFactor{1, 2}}) {
    DecodedImage full, part;
    d.decode(jpeg, ImageFormat::jpeg, f, full);
    const PixelBox box{37 * f.num / f.denom, 21 * f.num / f.denom, 150 * f.num / f.denom, 120 * f.num / f.denom};
    d.decode_region(jpeg, ImageFormat::jpeg, {200, 150}, f, box, part);
    ASSERT_LE(part.left, box.left);  // widened to whole blocks
    ASSERT_GE(part.left + part.width, box.right);
    ASSERT_EQ(part.top, box.top);
    ASSERT_EQ(part.height, box.bottom - box.top);
    // Every pixel but the first and last decoded column (edge-replicated chroma) is the full decode's.
    int differing = 0;
    for (int y = 0; y < part.height; ++y)
      for (int x = 1; x + 1 < part.width; ++x)
        for (int c = 0; c < 3; ++c)
          differing += part.rgb[(static_cast<std::size_t>(y) * part.width + x) * 3 + c] !=
                       full.rgb[(static_cast<std::size_t>(y + part.top) * full.width + x + part.left) * 3 + c];
    EXPECT_EQ(differing, 0) << f.num << "/" << f.denom;
  }
}

TEST(Decode, ACropResampledFromTheDecodedPartEqualsTheCropOfTheWholeImage) {
  const auto jpeg = encode_jpeg(synthesize_photo(160, 120, 8), 160, 120, 90);
  Decoder d;
  DecodedImage full, part;
  d.decode(jpeg, ImageFormat::jpeg, {1, 1}, full);
  const Region crop{30.0, 17.0, 130.0, 100.0};  // shrunk to 32: support 3.1, so a margin of 4 + 2
  d.decode_region(jpeg, ImageFormat::jpeg, {160, 120}, {1, 1}, {24, 11, 136, 106}, part);
  Resampler r;
  std::vector<float> a(3 * 32 * 32), b(3 * 32 * 32);
  r.resize_normalize({full.rgb.data(), full.width, full.height, static_cast<std::size_t>(full.width) * 3}, crop, 32,
                     false, Normalization{}, a.data());
  const Region shifted{crop.x0 - part.left, crop.y0 - part.top, crop.x1 - part.left, crop.y1 - part.top};
  r.resize_normalize({part.rgb.data(), part.width, part.height, static_cast<std::size_t>(part.width) * 3}, shifted,
                     32, false, Normalization{}, b.data());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << i;
}

TEST(Decode, RegionDecodingOfATruncatedFileIsAnError) {
  const auto jpeg = encode_jpeg(synthesize_photo(64, 64, 4), 64, 64, 90);
  const std::vector<std::uint8_t> truncated(jpeg.begin(), jpeg.begin() + 400);
  Decoder d;
  DecodedImage out;
  EXPECT_THROW(d.decode_region(truncated, ImageFormat::jpeg, {64, 64}, {1, 1}, {0, 0, 64, 64}, out), DecodeError);
  EXPECT_NO_THROW(d.decode_region(jpeg, ImageFormat::jpeg, {64, 64}, {1, 1}, {0, 0, 64, 64}, out));
}

TEST(Decode, GarbageIsAnErrorThatSaysWhat) {
  Decoder d;
  const std::vector<std::uint8_t> text{'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'};
  try {
    d.size(text, sniff_format(text));
    FAIL() << "no DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(), "not a JPEG or PNG file");
  }
  const std::vector<std::uint8_t> bad_jpeg{0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02};
  EXPECT_THROW(d.size(bad_jpeg, ImageFormat::jpeg), DecodeError);
}

TEST(SyntheticImages, ArePhotoLikeNotFlat) {
  // A 500 x 375 image at quality 90 weighs tens of kilobytes, as photographs do (ImageNet averages about
  // 110 KB); a flat colour would be about 3 KB.
  const auto rgb = synthesize_photo(500, 375, 5);
  const auto jpeg = encode_jpeg(rgb, 500, 375, 90);
  EXPECT_GT(jpeg.size(), 40'000u);
  EXPECT_LT(jpeg.size(), 300'000u);
  EXPECT_EQ(synthesize_photo(500, 375, 5), rgb);  // deterministic
  EXPECT_NE(synthesize_photo(500, 375, 6), rgb);
}

}  // namespace
}  // namespace gpusage::pipeline
