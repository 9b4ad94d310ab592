#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "pipeline/image_folder.hpp"
#include "unit/pipeline/temp_folder.hpp"

namespace gpusage::pipeline {
namespace {

using testing::TempFolder;

TEST(ImageFolderScan, NumbersSortedClassesAndSortsTheirFilesRecursivelyAsTorchvision) {
  TempFolder t;
  t.write_text("dog/b.jpg", "x");
  t.write_text("dog/a.PNG", "x");
  t.write_text("dog/sub/c.jpeg", "x");
  t.write_text("cat/z.JPG", "x");
  t.write_text("cat/notes.txt", "x");
  t.write_text("cat/photo.webp", "x");
  const ImageFolder f = scan_image_folder(t.str());
  EXPECT_EQ(f.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(f.samples.size(), 4u);
  EXPECT_EQ(f.samples[0].path, t.path("cat/z.JPG"));
  EXPECT_EQ(f.samples[0].label, 0);
  EXPECT_EQ(f.samples[1].path, t.path("dog/a.PNG"));
  EXPECT_EQ(f.samples[2].path, t.path("dog/b.jpg"));
  EXPECT_EQ(f.samples[3].path, t.path("dog/sub/c.jpeg"));  // os.walk: the class folder's files, then sub/
  EXPECT_EQ(f.samples[3].label, 1);
  EXPECT_EQ(f.ignored_files, 2);
  EXPECT_TRUE(f.empty_classes.empty());
}

TEST(ImageFolderScan, KeepsEmptyClassesInTheNumberingAndListsThem) {
  TempFolder t;
  t.write_text("a/x.jpg", "x");
  std::filesystem::create_directories(t.path("b"));
  t.write_text("c/y.jpg", "x");
  const ImageFolder f = scan_image_folder(t.str());
  EXPECT_EQ(f.classes.size(), 3u);
  EXPECT_EQ(f.empty_classes, (std::vector<std::string>{"b"}));
  EXPECT_EQ(f.samples[1].label, 2);
}

TEST(ImageFolderScan, BadDirectoriesAreOneLineInputErrors) {
  TempFolder t;
  const std::string missing = t.path("nope");
  try {
    scan_image_folder(missing);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--data '" + missing +
                                         "': not a directory; give an ImageFolder directory (one sub-folder of "
                                         "images per class) or synthetic");
  }
  t.write_text("loose.jpg", "x");
  try {
    scan_image_folder(t.str());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--data '" + t.str() +
                                         "': no class folder in it; ImageFolder wants one sub-folder of images per "
                                         "class");
  }
  t.write_text("a/readme.txt", "x");
  t.write_text("b/readme.txt", "x");
  try {
    scan_image_folder(t.str());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--data '" + t.str() + "': no .jpg, .jpeg or .png file in its 2 class folders");
  }
}

TEST(ImageFolderScan, ExtensionsAreCaseInsensitive) {
  EXPECT_TRUE(has_image_extension("a.JpEg"));
  EXPECT_TRUE(has_image_extension("a.png"));
  EXPECT_FALSE(has_image_extension("a.jpg.txt"));
  EXPECT_FALSE(has_image_extension("jpg"));
}

}  // namespace
}  // namespace gpusage::pipeline
