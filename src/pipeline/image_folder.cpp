#include "pipeline/image_folder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include "core/common/error.hpp"

namespace gpusage::pipeline {
namespace fs = std::filesystem;

bool has_image_extension(const std::string& file_name) {
  const auto dot = file_name.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = file_name.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == "jpg" || ext == "jpeg" || ext == "png";
}

ImageFolder scan_image_folder(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw InputError(
        fmt::format("--data '{}': not a directory; give an ImageFolder directory (one sub-folder "
                    "of images per class) or synthetic",
                    root));
  ImageFolder folder;
  folder.root = root;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory(ec)) folder.classes.push_back(entry.path().filename().string());
  if (ec) throw InputError(fmt::format("--data '{}': cannot read the directory: {}", root, ec.message()));
  std::sort(folder.classes.begin(), folder.classes.end());
  if (folder.classes.empty())
    throw InputError(
        fmt::format("--data '{}': no class folder in it; ImageFolder wants one sub-folder of "
                    "images per class",
                    root));
  for (std::size_t label = 0; label < folder.classes.size(); ++label) {
    // (folder, file name) pairs sorted: torchvision sorts os.walk's (root, dirs, files) and each files list.
    std::vector<std::pair<std::string, std::string>> files;
    const fs::path class_dir = fs::path(root) / folder.classes[label];
    for (auto it = fs::recursive_directory_iterator(
             class_dir, fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied,
             ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec)) continue;
      const std::string name = it->path().filename().string();
      if (has_image_extension(name)) {
        files.emplace_back(it->path().parent_path().string(), name);
      } else {
        ++folder.ignored_files;
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) folder.empty_classes.push_back(folder.classes[label]);
    for (auto& [dir, name] : files)
      folder.samples.push_back({(fs::path(dir) / name).string(), static_cast<int>(label)});
  }
  if (folder.samples.empty())
    throw InputError(fmt::format("--data '{}': no .jpg, .jpeg or .png file in its {} class folder{}", root,
                                 folder.classes.size(), folder.classes.size() == 1 ? "" : "s"));
  return folder;
}

}  // namespace gpusage::pipeline
