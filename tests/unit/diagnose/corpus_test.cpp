// doctor --log on the real corpus: logs pasted in public issue threads (tests/fixtures/doctor/real, one row
// per file in index.csv with its expected category and source URL). Prints recall per category and false
// alarms on the clean logs, and fails below the targets: recall >= 95% in every category, no false alarm.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/common/text.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::diagnose {
namespace {

const std::string kDir = std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/real/";

struct Case {
  std::string file;
  std::string expected;
  std::string source;
};

std::vector<Case> corpus() {
  std::ifstream in(kDir + "index.csv");
  std::vector<Case> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (text::trim(line).empty()) continue;
    const auto fields = text::csv_fields(line);
    if (fields.size() < 3) continue;
    cases.push_back({fields[0], fields[1], fields[2]});
  }
  return cases;
}

// The corpus category each log finding stands for.
std::string category_of(const std::string& id) {
  static const std::map<std::string, std::string> map = {
      {"log-cuda-oom", "cuda-oom"},
      {"log-oom-fragmentation", "cuda-oom"},
      {"log-tf-oom", "tf-oom"},
      {"log-host-oom", "host-oom"},
      {"log-no-kernel-image", "no-kernel-image"},
      {"log-driver-too-old", "driver-too-old"},
      {"log-driver-mismatch", "driver-too-old"},
      {"log-non-finite", "loss-blowup"},
      {"log-loss-scale-collapse", "loss-blowup"},
      {"log-overflow-skips", "loss-blowup"},
      {"log-grad-explosion", "loss-blowup"},
      {"log-nccl-timeout", "nccl"},
      {"log-nccl-error", "nccl"},
      {"log-dataloader-killed", "dataloader"},
      {"log-cudnn-error", "cudnn"},
      {"log-illegal-memory-access", "illegal-memory-access"},
      {"log-device-assert", "device-assert"},
      {"log-jax-oom", "jax-oom"},
      {"log-cudnn-version-mismatch", "cudnn-version-mismatch"},
      {"log-arch-unsupported", "arch-unsupported"},
  };
  auto it = map.find(id);
  return it == map.end() ? "" : it->second;
}

// The corpus issue 30 asked for, kept from shrinking: at least 250 logs, 12 failure categories, 40 clean
// logs, 20 from JAX (named jax-* or *-jax-* by convention), and a third from 2024-2026 by the thread's own date
// (years.csv: file, year, basis; estimated years do not count).
TEST(RealCorpus, EveryIndexedFileExistsWithASourceUrl) {
  const auto cases = corpus();
  ASSERT_GE(cases.size(), 250u);
  std::size_t failures = 0;
  std::size_t clean = 0;
  std::size_t jax = 0;
  std::set<std::string> categories;
  for (const auto& c : cases) {
    EXPECT_TRUE(std::ifstream(kDir + c.file).good()) << c.file;
    EXPECT_EQ(c.source.rfind("https://", 0), 0u) << c.file;
    (c.expected == "clean" ? clean : failures) += 1;
    if (c.expected != "clean") categories.insert(c.expected);
    if (c.file.find("jax") != std::string::npos) ++jax;
  }
  EXPECT_GE(categories.size(), 12u);
  EXPECT_GE(clean, 40u);
  EXPECT_GE(jax, 20u);

  std::ifstream years(kDir + "years.csv");
  std::string line;
  std::getline(years, line);  // header
  std::size_t recent = 0;
  while (std::getline(years, line)) {
    const auto fields = text::csv_fields(line);
    if (fields.size() < 3 || fields[2] != "thread date") continue;
    const int year = std::stoi(fields[1]);
    if (year >= 2024 && year <= 2026) ++recent;
  }
  EXPECT_GE(recent * 3, cases.size()) << recent << " of " << cases.size() << " dated 2024-2026 by their thread";
}

TEST(RealCorpus, RecallPerCategoryAndNoFalseAlarms) {
  std::map<std::string, std::pair<int, int>> recall;  // category -> (recognised, total)
  int false_alarms = 0;
  int clean = 0;
  for (const auto& c : corpus()) {
    const LogScan scan = scan_log_file(kDir + c.file);
    const std::vector<Finding> findings = check_log(scan, RunContext{});
    ASSERT_FALSE(findings.empty()) << c.file;
    if (c.expected == "clean") {
      ++clean;
      for (const auto& f : findings) {
        if (f.severity == Severity::error || f.severity == Severity::warning) {
          ++false_alarms;
          ADD_FAILURE() << "false alarm on " << c.file << ": " << f.id << ": " << f.title;
          break;
        }
      }
      continue;
    }
    auto& [hit, total] = recall[c.expected];
    ++total;
    // The first finding is the cause: a cascade's consequences must not come first.
    const std::string got = category_of(findings.front().id);
    if (got == c.expected) {
      ++hit;
    } else {
      std::vector<std::string> all;
      for (const auto& f : findings) all.push_back(f.id);
      std::cout << fmt::format("  missed {} ({}): got {}\n", c.file, c.expected, text::join(all));
    }
  }
  std::cout << fmt::format("{:<18} {:>10} {:>8}\n", "category", "recognised", "recall");
  for (const auto& [category, counts] : recall) {
    const double r = 100.0 * counts.first / counts.second;
    std::cout << fmt::format("{:<18} {:>4} / {:<3} {:>7.1f}%\n", category, counts.first, counts.second, r);
    EXPECT_GE(r, 95.0) << category;
  }
  std::cout << fmt::format("false alarms on {} clean logs: {}\n", clean, false_alarms);
  EXPECT_EQ(false_alarms, 0);
}

TEST(RealCorpus, EveryOomWithACapacityGetsAFixComputedForThatCapacity) {
  const workload::Workload resnet = workload::build("resnet50");
  int with_capacity = 0;
  for (const auto& c : corpus()) {
    if (c.expected != "cuda-oom" && c.expected != "tf-oom") continue;
    const LogScan scan = scan_log_file(kDir + c.file);
    std::optional<double> capacity;
    for (const auto& r : scan.cuda_oom) capacity = r.capacity_bytes ? r.capacity_bytes : capacity;
    if (!capacity && scan.tf_oom_count) capacity = scan.tf_capacity_bytes;
    if (!capacity) continue;
    ++with_capacity;
    const std::string on = fmt::format("the log's {} capacity", format_size(*capacity));
    // Without a model: the shortfall on that capacity.
    const auto plain = check_log(scan, RunContext{});
    EXPECT_NE(plain.front().fix.find(on), std::string::npos) << c.file << ": " << plain.front().fix;
    // With a model and a batch: the largest batch on that capacity.
    RunContext ctx;
    ctx.workload = &resnet;
    ctx.batch = 64;
    const auto planned = check_log(scan, ctx);
    const std::string& fix = planned.front().fix;
    EXPECT_TRUE(fix.find("Largest batch that fits on " + on) != std::string::npos ||
                fix.find("Even batch 1 does not fit on " + on) != std::string::npos)
        << c.file << ": " << fix;
  }
  EXPECT_GE(with_capacity, 15);
}

}  // namespace
}  // namespace gpusage::diagnose
