// gpusage-trace's workload JSON read into a Workload: every field lands where the zoo's layers keep it,
// unknown op classes are priced and named with their FLOP share, and bad files end in one line naming the
// field and the value (exit 2 at the CLI), never in a crash or a prediction from garbage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/common/io.hpp"
#include "core/workload/traced.hpp"
#include "unit/input_error.hpp"

namespace gpusage::workload {
namespace {

using gpusage::testing::input_error_message;
using nlohmann::json;

std::string fixture_text() {
  return io::read_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/workloads/tiny_mlp.json", "fixture");
}

// The fixture with `field` of layer 0 (or of the document when layer < 0) set to `value` (raw JSON text).
std::string with_field(int layer, const std::string& field, const std::string& value) {
  json doc = json::parse(fixture_text());
  json& target = layer < 0 ? doc : doc["layers"][static_cast<std::size_t>(layer)];
  target[field] = nullptr;
  std::string text = doc.dump();
  const std::string placeholder = "\"" + field + "\":null";
  text.replace(text.find(placeholder), placeholder.size(), "\"" + field + "\":" + value);
  return text;
}

std::string error_for(const std::string& text) {
  return input_error_message([&] { from_traced_workload(text, "m.json"); });
}

TEST(TracedWorkload, ReadsEveryLayerFieldAsTheZooKeepsIt) {
  const Workload w = from_traced_workload(fixture_text(), "tiny_mlp.json");
  EXPECT_EQ(w.id, "traced:tiny_mlp");
  EXPECT_EQ(w.display_name, "tiny_mlp (traced)");
  EXPECT_EQ(w.domain, Domain::vision);
  EXPECT_EQ(w.resolution, 32);
  ASSERT_EQ(w.layers.size(), 4u);
  const Layer& fc1 = w.layers[0];
  EXPECT_EQ(fc1.name, "fc1");
  EXPECT_EQ(fc1.op, OpClass::matmul);
  EXPECT_EQ(fc1.output_shape, (std::vector<std::int64_t>{256}));
  EXPECT_EQ(fc1.params, 786688);
  EXPECT_DOUBLE_EQ(fc1.forward_flops, 1572864);
  EXPECT_DOUBLE_EQ(fc1.saved_elements, 3072);
  EXPECT_DOUBLE_EQ(fc1.input_elements, 3072);
  EXPECT_EQ(fc1.segment, -1);
  ASSERT_EQ(fc1.lora_targets.size(), 1u);
  EXPECT_EQ(fc1.lora_targets[0].in, 3072);
  EXPECT_EQ(fc1.lora_targets[0].out, 256);
  EXPECT_EQ(w.layers[1].segment, 0);
  EXPECT_EQ(w.params(), 786688 + 2570);
  EXPECT_EQ(w.frozen_params(), 1000);
}

TEST(TracedWorkload, PricesAnUnknownOpClassAsElementwiseAndNamesItsFlopShare) {
  const Workload w = from_traced_workload(fixture_text(), "tiny_mlp.json");
  EXPECT_EQ(w.layers[2].op, OpClass::elementwise);
  ASSERT_EQ(w.notes.size(), 1u);
  // 25,600 of 1,572,864 + 256 + 25,600 + 5,120 forward FLOPs.
  EXPECT_THAT(w.notes[0], ::testing::HasSubstr("traced op class 'custom_scatter' (1 layer, 1.6% of the forward FLOPs)"));
  EXPECT_THAT(w.notes[0], ::testing::HasSubstr("priced as a memory-bound elementwise kernel"));
}

TEST(TracedWorkload, RepeatsTheTracersNotes) {
  const Workload w = from_traced_workload(with_field(-1, "notes", "[\"custom autograd Function Clip (1 call)\"]"), "m.json");
  ASSERT_EQ(w.notes.size(), 2u);
  EXPECT_EQ(w.notes[0], "gpusage-trace: custom autograd Function Clip (1 call)");
  EXPECT_EQ(error_for(with_field(-1, "notes", "[3]")), "workload m.json: notes holds 3; accepted: a list of strings");
}

TEST(TracedWorkload, RejectsTextThatIsNotJsonNamingTheFile) {
  EXPECT_THAT(error_for("{\"format\": "), ::testing::StartsWith("workload m.json is not valid JSON: "));
}

TEST(TracedWorkload, RejectsANumberThatOverflowsWithAnInputErrorNamingIt) {
  const std::string message = error_for(with_field(0, "forward_flops", "1e999"));
  EXPECT_THAT(message, ::testing::StartsWith("workload m.json is not valid JSON: "));
  EXPECT_THAT(message, ::testing::HasSubstr("1e999"));
}

TEST(TracedWorkload, RejectsANegativeOrHugeCountNamingTheLayerAndField) {
  EXPECT_EQ(error_for(with_field(0, "forward_flops", "-1")),
            "workload m.json: layers[0].forward_flops is -1; accepted: a number from 0 to 1e+18");
  EXPECT_EQ(error_for(with_field(1, "saved_elements", "1e300")),
            "workload m.json: layers[1].saved_elements is 1e+300; accepted: a number from 0 to 1e+18");
  EXPECT_EQ(error_for(with_field(0, "params", "2.5")),
            "workload m.json: layers[0].params is 2.5; accepted: a whole number from 0 to 10000000000000");
  EXPECT_EQ(error_for(with_field(0, "segment", "\"x\"")),
            "workload m.json: layers[0].segment is \"x\"; accepted: a whole number from -1 to 1000000");
  EXPECT_EQ(error_for(with_field(0, "output_shape", "[0]")),
            "workload m.json: layers[0].output_shape[0] is 0; accepted: a whole number from 1 to 1099511627776");
}

TEST(TracedWorkload, RejectsAnotherFormatOrVersion) {
  EXPECT_EQ(error_for(with_field(-1, "version", "2")),
            "workload m.json: version is 2; accepted: 1 (trace the model again with this gpusage's gpusage-trace)");
  EXPECT_EQ(error_for(with_field(-1, "format", "\"onnx\"")),
            "workload m.json: format is 'onnx'; accepted: 'gpusage-workload' (a file gpusage-trace wrote)");
  EXPECT_EQ(error_for("[1, 2]"), "workload m.json: the document is [1,2]; accepted: an object");
}

TEST(TracedWorkload, RejectsMissingOrEmptyLayers) {
  EXPECT_EQ(error_for(with_field(-1, "layers", "[]")),
            "workload m.json: layers has 0 entries; accepted: a list of 1 to 1000000 layers");
  EXPECT_EQ(error_for(with_field(0, "name", "7")), "workload m.json: layers[0].name is 7; accepted: a string");
  EXPECT_EQ(error_for(with_field(-1, "domain", "\"audio\"")),
            "workload m.json: domain is 'audio'; accepted: vision or language");
}

}  // namespace
}  // namespace gpusage::workload
