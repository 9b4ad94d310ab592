// torchvision.datasets.ImageFolder's view of a directory: one sub-folder per class, classes sorted by
// name and numbered from 0, the images of a class found recursively (symbolic links followed) and
// sorted by (folder, file name) as torchvision's make_dataset walks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpusage::pipeline {

struct Sample {
  std::string path;
  int label = 0;
};

struct ImageFolder {
  std::string root;
  std::vector<std::string> classes;  // label -> class folder name
  std::vector<Sample> samples;
  std::vector<std::string> empty_classes;  // class folders with no image (torchvision refuses them)
  std::int64_t ignored_files = 0;          // files without an image extension
};

// Extensions read, case-insensitively: .jpg .jpeg .png (torchvision also lists .ppm .bmp .pgm .tif
// .tiff .webp, which are counted in ignored_files).
bool has_image_extension(const std::string& file_name);

// Scans `root`. Throws InputError, naming the directory, when it does not exist, has no class folder,
// or has no image in any class.
ImageFolder scan_image_folder(const std::string& root);

}  // namespace gpusage::pipeline
