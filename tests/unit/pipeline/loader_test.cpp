#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "pipeline/loader.hpp"
#include "unit/pipeline/temp_folder.hpp"

namespace gpusage::pipeline {
namespace {

using testing::TempFolder;

// `n` small JPEGs of varied sizes in 3 classes.
ImageFolder small_folder(const TempFolder& t, int n) {
  for (int i = 0; i < n; ++i)
    t.jpeg("c" + std::to_string(i % 3) + "/img" + std::to_string(i) + ".jpg", 40 + 7 * (i % 5), 30 + 5 * (i % 4),
           static_cast<std::uint64_t>(i));
  return scan_image_folder(t.str());
}

LoaderConfig tiny(int workers, int batch = 4, std::uint64_t seed = 1) {
  LoaderConfig c;
  c.batch_size = batch;
  c.image_size = 16;
  c.workers = workers;
  c.seed = seed;
  return c;
}

struct Taken {
  std::vector<float> images;
  std::vector<std::int64_t> labels;
};

Taken take(Loader& loader, int batches) {
  Taken t;
  const std::size_t floats = loader.floats_per_image() * static_cast<std::size_t>(loader.config().batch_size);
  for (int b = 0; b < batches; ++b) {
    const BatchLease lease = loader.next();
    EXPECT_EQ(lease.index(), b);
    t.images.insert(t.images.end(), lease.images(), lease.images() + floats);
    t.labels.insert(t.labels.end(), lease.labels(), lease.labels() + lease.size());
  }
  return t;
}

TEST(Loader, SameSeedGivesBitIdenticalBatchesForAnyWorkerCount) {
  TempFolder t;
  const ImageFolder folder = small_folder(t, 10);
  // 5 batches of 4 = 20 samples: two epochs of 10, batches straddling the boundary.
  Loader one(folder, tiny(1));
  const Taken reference = take(one, 5);
  for (int workers : {2, 3, 5}) {
    Loader many(folder, tiny(workers));
    const Taken t2 = take(many, 5);
    EXPECT_EQ(t2.labels, reference.labels) << workers << " workers";
    ASSERT_EQ(t2.images.size(), reference.images.size());
    EXPECT_EQ(std::memcmp(t2.images.data(), reference.images.data(), t2.images.size() * sizeof(float)), 0)
        << workers << " workers";
  }
  Loader other(folder, tiny(2, 4, 2));
  EXPECT_NE(take(other, 5).images, reference.images);  // another seed, other crops and order
}

TEST(Loader, EachEpochVisitsEveryImageOnceInAShuffledOrder) {
  TempFolder t;
  const ImageFolder folder = small_folder(t, 12);
  std::map<std::int64_t, int> expected;
  for (const auto& s : folder.samples) ++expected[s.label];
  Loader loader(folder, tiny(2, 6));
  const Taken t2 = take(loader, 4);  // two epochs of 12
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::map<std::int64_t, int> seen;
    for (int i = 0; i < 12; ++i) ++seen[t2.labels[static_cast<std::size_t>(epoch * 12 + i)]];
    EXPECT_EQ(seen, expected) << "epoch " << epoch;
  }
  std::vector<std::int64_t> in_order;
  for (const auto& s : folder.samples) in_order.push_back(s.label);
  EXPECT_NE(std::vector<std::int64_t>(t2.labels.begin(), t2.labels.begin() + 12), in_order);
}

TEST(Loader, ValuesAreNormalisedPixels) {
  TempFolder t;
  Loader loader(small_folder(t, 6), tiny(2));
  const Taken t2 = take(loader, 2);
  // (0 - 0.485) / 0.229 = -2.12 is the lowest any channel can go, (1 - 0.406) / 0.225 = 2.64 the highest.
  const auto [lo, hi] = std::minmax_element(t2.images.begin(), t2.images.end());
  EXPECT_GE(*lo, -2.12f);
  EXPECT_LE(*hi, 2.65f);
  EXPECT_LT(*lo, *hi);
}

TEST(Loader, CorruptAndUnreadableFilesAreCountedNamedAndSkipped) {
  TempFolder t;
  for (int i = 0; i < 6; ++i) t.jpeg("good/img" + std::to_string(i) + ".jpg", 48, 32, static_cast<std::uint64_t>(i));
  const auto jpeg = encode_jpeg(synthesize_photo(64, 64, 9), 64, 64, 90);
  t.write("bad/truncated.jpg", std::vector<std::uint8_t>(jpeg.begin(), jpeg.begin() + 300));
  t.write_text("bad/text.jpg", "this is not a JPEG");
  std::filesystem::create_symlink(t.path("missing-target.jpg"), t.path("bad/dangling.jpg"));
  const ImageFolder folder = scan_image_folder(t.str());
  ASSERT_EQ(folder.samples.size(), 9u);
  Loader loader(folder, tiny(2, 3));
  const Taken t2 = take(loader, 9);  // three epochs: every bad file is met again, counted once
  for (std::int64_t label : t2.labels) EXPECT_EQ(folder.classes[static_cast<std::size_t>(label)], "good");
  const LoaderStats s = loader.stats();
  EXPECT_EQ(s.failed_files, 3);
  std::set<std::string> named;
  for (const auto& f : s.failed) {
    named.insert(std::filesystem::path(f.path).filename().string());
    EXPECT_FALSE(f.reason.empty());
  }
  EXPECT_EQ(named, (std::set<std::string>{"truncated.jpg", "text.jpg", "dangling.jpg"}));
  EXPECT_GE(s.images, 27);
}

TEST(Loader, FailsLoudlyWhenNoFileCanBeDecoded) {
  TempFolder t;
  t.write_text("a/1.jpg", "no");
  t.write_text("a/2.png", "no");
  Loader loader(scan_image_folder(t.str()), tiny(2, 2));
  EXPECT_THROW(loader.next(), std::runtime_error);
}

TEST(Loader, StopsAndJoinsItsWorkersMidEpoch) {
  TempFolder t;
  const ImageFolder folder = small_folder(t, 9);
  {
    Loader never_read(folder, tiny(3));  // workers blocked on full slots, or still decoding
  }
  {
    Loader loader(folder, tiny(3));
    const BatchLease held = loader.next();
    EXPECT_EQ(held.size(), 4);
  }  // the lease is released before the loader: either order must work
  BatchLease survivor;
  {
    Loader loader(folder, tiny(2));
    survivor = loader.next();
  }
  EXPECT_EQ(survivor.index(), 0);  // its memory outlives the loader
  EXPECT_EQ(survivor.labels()[0], survivor.labels()[0]);
}

TEST(Loader, RefusesToWaitForeverWhenTheConsumerHoldsEveryBatch) {
  TempFolder t;
  LoaderConfig c = tiny(1);
  c.prefetch_batches = 1;  // two slots
  Loader loader(small_folder(t, 6), c);
  const BatchLease a = loader.next();
  const BatchLease b = loader.next();
  EXPECT_THROW(loader.next(), std::logic_error);
}

TEST(Loader, ShardsSplitEachEpochWithoutOverlap) {
  TempFolder t;
  const ImageFolder folder = small_folder(t, 8);
  std::multiset<std::int64_t> all;
  for (int rank = 0; rank < 2; ++rank) {
    LoaderConfig c = tiny(1, 4);
    c.shard_index = rank;
    c.shard_count = 2;
    c.crop.scale_min = c.crop.scale_max = 1.0;
    Loader loader(folder, c);
    const Taken t2 = take(loader, 1);  // one epoch of this shard: 4 images
    all.insert(t2.labels.begin(), t2.labels.end());
  }
  std::multiset<std::int64_t> expected;
  for (const auto& s : folder.samples) expected.insert(s.label);
  EXPECT_EQ(all, expected);
}

TEST(Loader, WritesIntoTheCallersMemory) {
  TempFolder t;
  std::vector<float*> handed_out;
  LoaderConfig c = tiny(1);
  c.allocate = [&](std::size_t floats) {
    auto memory = std::make_shared<std::vector<float>>(floats);
    handed_out.push_back(memory->data());
    return BatchMemory{memory->data(), memory};
  };
  Loader loader(small_folder(t, 4), c);
  const BatchLease lease = loader.next();
  EXPECT_NE(std::find(handed_out.begin(), handed_out.end(), lease.images()), handed_out.end());
}

}  // namespace
}  // namespace gpusage::pipeline
