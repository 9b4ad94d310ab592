// Internal to the workload module: the zoo's models as data (zoo_table.cpp) for zoo.cpp's build().
#pragma once

#include <string>
#include <vector>

#include "core/workload/models.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::workload::detail {

enum class ZooKind { resnet, vgg, mobilenet_v2, efficientnet_b0, vit, transformer };

struct ZooModel {
  ZooEntry entry;
  ZooKind kind;
  std::string architecture_source;
  ResNetSpec resnet{};
  VggSpec vgg{};
  VitSpec vit{};
};

// Every zoo model in display order; language models are built from zoo_hf_config(id).
const std::vector<ZooModel>& zoo_models();

}  // namespace gpusage::workload::detail
