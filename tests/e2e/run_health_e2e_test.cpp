// gpusage run end to end, GPU health: the NVML stub scripts an XID 79 and two uncorrected ECC errors while a
// child runs (tests/fixtures/run/gpu_xid.json); both must reach the live lines, gpu.jsonl, summary.json, the
// report page and the notification hook.
#include <gtest/gtest.h>

#include "e2e/run_harness.hpp"

namespace gpusage::testing {
namespace {

std::vector<json> alerts_of_kind(const json& alerts, const std::string& kind) {
  std::vector<json> out;
  for (const auto& a : alerts)
    if (a.at("kind") == kind) out.push_back(a);
  return out;
}

TEST(RunHealthE2E, XidAndAnUncorrectedEccRiseDuringTheRunAreFindingsEverywhere) {
  const std::string hooked = temp_path("health-notify.jsonl");
  fs::remove(hooked);
  const RunResult r = run_gpusage("health", {"--notify", "cat >> " + hooked + "; echo >> " + hooked},
                                  {child("wait_samples.sh"), "{dir}", "6"}, child("gpu_xid.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "saw 6 samples")) << r.out;

  // The live lines (and the summary's alert lines) on stderr.
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0 at ")) << r.err;
  EXPECT_TRUE(contains(r.err, ": XID 79 (GPU has fallen off the bus): the GPU stopped answering on PCIe"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "Next: drain the node and reboot it")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "gpusage: alert: GPU 0: 2 uncorrected ECC memory errors while gpusage watched (the "
                       "driver's count went 0 to 2)"))
      << r.err;

  // summary.json: one XID alert with its number, one ECC alert, both critical.
  const json summary = read_json(r.dir + "/summary.json");
  const auto xids = alerts_of_kind(summary.at("alerts"), "xid_error");
  ASSERT_EQ(xids.size(), 1u) << summary.at("alerts");
  EXPECT_EQ(xids[0].at("xid"), 79);
  EXPECT_EQ(xids[0].at("gpu"), 0);
  EXPECT_EQ(xids[0].at("uuid"), "GPU-a100a100-0000-0000-0000-000000000001");
  EXPECT_EQ(xids[0].at("severity"), "critical");
  const auto ecc = alerts_of_kind(summary.at("alerts"), "ecc_errors");
  ASSERT_EQ(ecc.size(), 1u) << summary.at("alerts");
  EXPECT_EQ(ecc[0].at("severity"), "critical");
  EXPECT_TRUE(alerts_of_kind(summary.at("alerts"), "remapped_rows").empty());  // counters at 0 throughout

  // gpu.jsonl: the sample that carried the event has the XID beside its alert, and only that sample.
  int samples_with_xid = 0;
  for (const json& sample : read_jsonl(r.dir + "/gpu.jsonl")) {
    const json& gpu = sample.at("gpus").at(0);
    EXPECT_EQ(gpu.at("remapped_rows_failure"), 0);
    if (gpu.at("xid_events").empty()) continue;
    ++samples_with_xid;
    EXPECT_EQ(gpu.at("xid_events"), json::array({79}));
    EXPECT_EQ(alerts_of_kind(sample.at("alerts"), "xid_error").size(), 1u);
  }
  EXPECT_EQ(samples_with_xid, 1);

  // The report page lists the alerts it read back from gpu.jsonl.
  const std::string page = read_text(r.dir + "/report.html");
  EXPECT_TRUE(contains(page, "XID 79 (GPU has fallen off the bus)"));

  // The notification hook got each as an alert event at error level (critical).
  std::vector<json> events;
  for (const auto& line : text::split(read_text(hooked), '\n'))
    if (!line.empty()) events.push_back(json::parse(line));
  bool xid_sent = false, ecc_sent = false;
  for (const json& e : events) {
    if (e.at("event") != "alert") continue;
    EXPECT_EQ(e.at("severity"), "error");
    xid_sent = xid_sent || (e.at("alert").at("kind") == "xid_error" && e.at("alert").at("xid") == 79);
    ecc_sent = ecc_sent || e.at("alert").at("kind") == "ecc_errors";
  }
  EXPECT_TRUE(xid_sent) << read_text(hooked);
  EXPECT_TRUE(ecc_sent) << read_text(hooked);
}

}  // namespace
}  // namespace gpusage::testing
