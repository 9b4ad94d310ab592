// The JPEG and PNG variants an ImageFolder holds besides 8-bit RGB: CMYK and YCCK JPEGs, grayscale JPEGs,
// 16-bit PNGs; files truncated inside the crop; headers that claim a decompression bomb. Fixtures are
// encoded here (pipeline/synthetic_images.hpp), not checked in.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

#include "pipeline/decode.hpp"
#include "pipeline/synthetic_images.hpp"

namespace gpusage::pipeline {
namespace {

// Every pixel of `image` within `tolerance` of `rgb`.
::testing::AssertionResult is_flat(const DecodedImage& image, std::array<int, 3> rgb, int tolerance) {
  for (std::size_t i = 0; i < image.rgb.size(); ++i) {
    const int want = rgb[i % 3];
    if (std::abs(image.rgb[i] - want) > tolerance)
      return ::testing::AssertionFailure() << "byte " << i << " is " << int(image.rgb[i]) << ", not " << want;
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::uint8_t> flat_cmyk(int width, int height, std::array<std::uint8_t, 4> stored) {
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width) * height * 4);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = stored[i % 4];
  return pixels;
}

class CmykJpeg : public ::testing::TestWithParam<JpegPixels> {};

// Stored (Adobe, inverted) C, M, Y, K become R = C·K/255, G = M·K/255, B = Y·K/255, Pillow's conversion:
// K = 255 (no black ink) keeps C, M, Y; K = 128 halves them.
TEST_P(CmykJpeg, DecodesToRgbAsPillowConvertsIt) {
  Decoder d;
  for (const auto& [stored, rgb] : {std::pair{std::array<std::uint8_t, 4>{200, 100, 50, 255}, std::array<int, 3>{200, 100, 50}},
                                    std::pair{std::array<std::uint8_t, 4>{255, 255, 255, 128}, std::array<int, 3>{128, 128, 128}}}) {
    const auto jpeg = encode_jpeg(flat_cmyk(32, 16, stored), 32, 16, 98, GetParam());
    const ImageSize size = d.size(jpeg, ImageFormat::jpeg);
    ASSERT_EQ(size.width, 32);
    DecodedImage whole, half, region;
    d.decode(jpeg, ImageFormat::jpeg, size, {1, 1}, whole);
    ASSERT_EQ(whole.rgb.size(), 32u * 16 * 3);
    EXPECT_TRUE(is_flat(whole, rgb, 2));
    d.decode(jpeg, ImageFormat::jpeg, size, {1, 2}, half);
    EXPECT_EQ(half.width, 16);
    EXPECT_TRUE(is_flat(half, rgb, 2));
    d.decode_region(jpeg, ImageFormat::jpeg, size, {1, 1}, {9, 3, 20, 12}, region);
    EXPECT_EQ(region.rgb.size(), static_cast<std::size_t>(region.width) * region.height * 3);
    EXPECT_EQ(region.height, 9);
    EXPECT_TRUE(is_flat(region, rgb, 2));
  }
}

INSTANTIATE_TEST_SUITE_P(Decode, CmykJpeg, ::testing::Values(JpegPixels::cmyk, JpegPixels::ycck),
                         [](const auto& info) { return info.param == JpegPixels::cmyk ? "Cmyk" : "Ycck"; });

TEST(Decode, GrayscaleJpegDecodesToThreeEqualChannels) {
  std::vector<std::uint8_t> gray(24 * 16);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 24; ++x) gray[static_cast<std::size_t>(y) * 24 + x] = static_cast<std::uint8_t>(40 + 8 * x);
  const auto jpeg = encode_jpeg(gray, 24, 16, 98, JpegPixels::gray);
  Decoder d;
  DecodedImage whole, region;
  d.decode(jpeg, ImageFormat::jpeg, {1, 1}, whole);
  ASSERT_EQ(whole.rgb.size(), 24u * 16 * 3);
  int worst = 0;
  for (std::size_t p = 0; p < gray.size(); ++p) {
    EXPECT_EQ(whole.rgb[3 * p], whole.rgb[3 * p + 1]);
    EXPECT_EQ(whole.rgb[3 * p], whole.rgb[3 * p + 2]);
    worst = std::max(worst, std::abs(whole.rgb[3 * p] - gray[p]));
  }
  EXPECT_LE(worst, 3);
  d.decode_region(jpeg, ImageFormat::jpeg, {24, 16}, {1, 1}, {4, 4, 12, 12}, region);
  EXPECT_EQ(region.rgb[0], region.rgb[1]);
  EXPECT_EQ(region.rgb.size(), static_cast<std::size_t>(region.width) * region.height * 3);
}

// 16-bit samples keep their high byte, as Pillow reads a 16-bit RGB PNG ("RGB;16B"), and no gamma is applied
// to a file that declares none.
TEST(Decode, SixteenBitPngKeepsTheHighByteOfEachSample) {
  std::vector<std::uint16_t> rgb(6 * 4 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint16_t>(i * 2741 % 65536);
  const auto png = encode_png16(rgb, 6, 4);
  Decoder d;
  EXPECT_EQ(d.size(png, ImageFormat::png).width, 6);
  DecodedImage out;
  d.decode(png, ImageFormat::png, {1, 1}, out);
  ASSERT_EQ(out.rgb.size(), rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i) EXPECT_NEAR(out.rgb[i], rgb[i] >> 8, 1) << i << ": " << rgb[i];
}

TEST(Decode, AJpegTruncatedInsideTheCropIsAnErrorAndOneCutBelowItIsNot) {
  const auto jpeg = encode_jpeg(synthesize_photo(64, 256, 11), 64, 256, 90);
  const std::vector<std::uint8_t> truncated(jpeg.begin(), jpeg.begin() + static_cast<long>(jpeg.size() * 6 / 10));
  Decoder d;
  DecodedImage out;
  const ImageSize size = d.size(truncated, ImageFormat::jpeg);
  // The data ends around row 150: a crop of rows 180 to 240 reads past it.
  EXPECT_THROW(d.decode_region(truncated, ImageFormat::jpeg, size, {1, 1}, {8, 180, 56, 240}, out), DecodeError);
  // A crop of the first 32 rows never reaches the cut (what the loader cannot see, it does not need).
  EXPECT_NO_THROW(d.decode_region(truncated, ImageFormat::jpeg, size, {1, 1}, {8, 0, 56, 32}, out));
  EXPECT_EQ(out.height, 32);
}

// A header is enough to claim 30,000 x 30,000 pixels (2.5 GiB of RGB): refused before any allocation.
TEST(Decode, AHeaderClaimingMoreThanPillowsBombLimitIsAnError) {
  auto jpeg = encode_jpeg(synthesize_photo(16, 16, 2), 16, 16, 90);
  const std::array<std::uint8_t, 2> start_of_frame{0xFF, 0xC0};
  const auto sof = std::search(jpeg.begin(), jpeg.end(), start_of_frame.begin(), start_of_frame.end());
  ASSERT_NE(sof, jpeg.end());
  const std::array<std::uint8_t, 4> sides{0x75, 0x30, 0x75, 0x30};  // height, width: 30000 each, big-endian
  std::copy(sides.begin(), sides.end(), sof + 5);
  Decoder d;
  try {
    d.size(jpeg, ImageFormat::jpeg);
    FAIL() << "no DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(),
                 "JPEG: 30000 x 30000 pixels is more than 178956970 (a decompression bomb, as Pillow calls it)");
  }
}

}  // namespace
}  // namespace gpusage::pipeline
