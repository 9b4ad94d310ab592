// doctor --log on the real corpus: logs pasted in public issue threads (tests/fixtures/doctor/real, one row
// per file in index.csv: file, expected category, source URL, note, split, date, framework, OS).
//
// The corpus is split once, by thread (scripts/doctor-corpus-add): the logs of the first corpus are
// `in-sample` (the rules were written on them); a thread added later is `heldout` when the FNV-1a hash of its
// URL falls in the first 30 of 100 buckets, else `train`. Rules are written on in-sample and train logs only.
// The tests print recall per category and false alarms on the clean logs for both parts: the rules' own
// part must reach 95% in every category with no false alarm; the held-out part is reported beside it
// (README's doctor section quotes both tables) and must not fall below the floors at the end of this file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
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
  std::string split;      // in-sample, train, heldout
  std::string date;       // YYYY[-MM[-DD]] of the thread (empty: see years.csv)
  std::string framework;  // empty for the first corpus: read from the file name
  std::string os;
};

std::vector<Case> corpus() {
  std::ifstream in(kDir + "index.csv");
  std::vector<Case> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (text::trim(line).empty()) continue;
    const auto f = text::csv_fields(line);
    if (f.size() < 8) {
      ADD_FAILURE() << "index.csv row with " << f.size() << " fields: " << line;
      continue;
    }
    cases.push_back({f[0], f[1], f[2], f[4], f[5], f[6], f[7]});
  }
  return cases;
}

// The thread a URL belongs to, and its bucket: scripts/doctor-corpus-add computes the same.
std::string thread_of(std::string url) {
  url = url.substr(0, url.find_first_of("#?"));
  while (!url.empty() && url.back() == '/') url.pop_back();
  return text::to_lower(url);
}

std::uint64_t fnv1a64(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Held-out floors: the figures measured when these logs were added (README: 108 of 117 failures, one false alarm
// on 21 clean logs), then after the host OOM family and the stricter loss-scale rule (117 of 127, no false alarm
// on 21 clean logs), so that a change that loses held-out logs or adds a false alarm on them fails. Raise them as
// the held-out figures improve; lowering them to let a change through would make the held-out part meaningless.
constexpr double kHeldOutRecallFloor = 92.0;
constexpr int kHeldOutFalseAlarmCeiling = 0;
// That floor holds on the held-out rows it was measured on: the first 152 held-out rows of index.csv (127 failures,
// 25 clean logs). The held-out part has grown since (new threads whose hash fell in it, mostly host OOM logs told in
// fewer words), and its recall over all of them is floored at the figure measured with them: 161 of 173 after
// session 24b's fresh sample of host OOM logs, measured once with the rules as they were (157 of 168 before it).
constexpr std::size_t kHeldOutRowsOfTheFirstFloor = 152;
constexpr double kAllHeldOutRecallFloor = 93.0;
// And per category with at least 10 held-out logs (issue 54 asks 92% in each of them): the recall measured
// (README), rounded down. Host OOM is 60 of 66 (90.9%) on session 24b's fresh, pre-declared sample measured once
// (56 of 61 before it; the 5 new held-out logs: 4 recognised); it does not meet 92%.
const std::map<std::string, double>& held_out_category_floors() {
  static const std::map<std::string, double> floors = {
      {"cuda-oom", 96.1}, {"dataloader", 94.1}, {"gpu-too-old", 100.0},
      {"host-oom", 90.9}, {"loss-blowup", 92.8},
  };
  return floors;
}

bool hash_says_heldout(const std::string& url) { return fnv1a64(thread_of(url)) % 100 < 30; }

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
      {"log-dataloader-spawn", "dataloader"},
      {"log-cudnn-error", "cudnn"},
      {"log-illegal-memory-access", "illegal-memory-access"},
      {"log-device-assert", "device-assert"},
      {"log-jax-oom", "jax-oom"},
      {"log-cudnn-version-mismatch", "cudnn-version-mismatch"},
      {"log-arch-unsupported", "arch-unsupported"},
      {"log-gpu-too-old", "gpu-too-old"},
  };
  auto it = map.find(id);
  return it == map.end() ? "" : it->second;
}

bool named(const std::string& file, std::initializer_list<const char*> tokens) {
  for (const char* t : tokens) {
    if (file.find(t) != std::string::npos) return true;
  }
  return false;
}
bool is_jax_or_tf(const Case& c) {
  if (!c.framework.empty()) return named(c.framework, {"jax", "flax", "tensorflow", "keras"});
  return named(c.file, {"jax", "tf-", "-tf", "keras", "tensorflow"});
}
bool is_windows(const Case& c) {
  if (!c.os.empty()) return c.os == "windows" || c.os == "wsl2";
  return named(c.file, {"win", "wsl"});
}

// The corpus issue 30 asked for, kept from shrinking (at least 250 logs, 12 failure categories, 40 clean logs,
// 20 from JAX, a third from 2024-2026 by the thread's own date), and issue 54's split kept honest: every row has
// a split; a new thread's split is its hash's; a thread the first corpus cites is never held out; one thread,
// one split.
TEST(RealCorpus, EveryIndexedFileExistsWithASourceUrlAndItsThreadsSplit) {
  const auto cases = corpus();
  ASSERT_GE(cases.size(), 250u);
  std::size_t clean = 0;
  std::size_t jax = 0;
  std::set<std::string> categories;
  std::map<std::string, std::string> split_of_thread;
  std::set<std::string> in_sample_threads;
  for (const auto& c : cases) {
    if (c.split == "in-sample") in_sample_threads.insert(thread_of(c.source));
  }
  for (const auto& c : cases) {
    EXPECT_TRUE(std::ifstream(kDir + c.file).good()) << c.file;
    EXPECT_EQ(c.source.rfind("https://", 0), 0u) << c.file;
    if (c.expected == "clean") ++clean;
    if (c.expected != "clean") categories.insert(c.expected);
    if (c.file.find("jax") != std::string::npos || c.framework == "jax") ++jax;
    const std::string thread = thread_of(c.source);
    if (c.split != "in-sample") {
      EXPECT_TRUE(c.split == "train" || c.split == "heldout") << c.file << ": split '" << c.split << "'";
      EXPECT_FALSE(c.date.empty()) << c.file << " has no date";
      const bool seen = in_sample_threads.count(thread) > 0;
      const std::string want = !seen && hash_says_heldout(c.source) ? "heldout" : "train";
      EXPECT_EQ(c.split, want) << c.file << ": the split is the thread's hash's, once";
    }
    const std::string group = c.split == "heldout" ? "heldout" : "rules";
    auto [it, inserted] = split_of_thread.emplace(thread, group);
    EXPECT_EQ(it->second, group) << c.file << ": one thread, one split";
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
  for (const auto& c : cases) {
    if (c.split == "in-sample" || c.date.size() < 4) continue;
    const int year = std::stoi(c.date.substr(0, 4));
    if (year >= 2024 && year <= 2026) ++recent;
  }
  EXPECT_GE(recent * 3, cases.size()) << recent << " of " << cases.size() << " dated 2024-2026 by their thread";
}

// The corpus's size and spread (issue 54's targets: 800 logs, 500 threads, 40 repositories, 40% from 2024-2026,
// 60 JAX or TensorFlow, 50 Windows or WSL2, 120 clean), printed for README; asserted only not to shrink.
TEST(RealCorpus, SpreadIsPrinted) {
  const auto cases = corpus();
  std::set<std::string> threads;
  std::set<std::string> repos;
  std::size_t jax_tf = 0;
  std::size_t windows = 0;
  std::size_t clean = 0;
  std::size_t heldout = 0;
  std::size_t added = 0;
  for (const auto& c : cases) {
    threads.insert(thread_of(c.source));
    const auto parts = text::split(c.source, '/');
    if (parts.size() > 4) repos.insert(text::to_lower(parts[3] + "/" + parts[4]));
    jax_tf += is_jax_or_tf(c) ? 1 : 0;
    windows += is_windows(c) ? 1 : 0;
    clean += c.expected == "clean" ? 1 : 0;
    heldout += c.split == "heldout" ? 1 : 0;
    added += c.split != "in-sample" ? 1 : 0;
  }
  std::cout << fmt::format(
      "corpus: {} logs from {} threads in {} repositories; {} clean; {} JAX or TensorFlow; {} Windows or WSL2; "
      "{} added after the first corpus, {} of them held out ({:.0f}%)\n",
      cases.size(), threads.size(), repos.size(), clean, jax_tf, windows, added, heldout,
      added ? 100.0 * static_cast<double>(heldout) / static_cast<double>(added) : 0.0);
  EXPECT_GE(cases.size(), 321u);
  EXPECT_GE(repos.size(), 40u);
}

struct Tally {
  std::map<std::string, std::pair<int, int>> recall;  // category -> (recognised, total)
  int clean = 0;
  int false_alarms = 0;
  std::vector<std::string> missed;       // "file (expected): got ids"
  std::vector<std::string> alarms;       // "file: id: title"
};

// Runs doctor --log over the corpus rows `pick` selects.
template <typename Pick>
Tally tally(Pick pick) {
  Tally t;
  for (const auto& c : corpus()) {
    if (!pick(c)) continue;
    const LogScan scan = scan_log_file(kDir + c.file);
    const std::vector<Finding> findings = check_log(scan, RunContext{});
    if (findings.empty()) {
      ADD_FAILURE() << c.file << ": no finding at all";
      continue;
    }
    if (c.expected == "clean") {
      ++t.clean;
      for (const auto& f : findings) {
        if (f.severity == Severity::error || f.severity == Severity::warning) {
          ++t.false_alarms;
          t.alarms.push_back(fmt::format("{}: {}: {}", c.file, f.id, f.title));
          break;
        }
      }
      continue;
    }
    auto& [hit, total] = t.recall[c.expected];
    ++total;
    // The first finding is the cause: a cascade's consequences must not come first.
    if (category_of(findings.front().id) == c.expected) {
      ++hit;
    } else {
      std::vector<std::string> all;
      for (const auto& f : findings) all.push_back(f.id);
      t.missed.push_back(fmt::format("{} ({}): got {}", c.file, c.expected, text::join(all)));
    }
  }
  return t;
}

void print(const char* part, const Tally& t) {
  int hit = 0;
  int total = 0;
  std::cout << fmt::format("{}\n{:<24} {:>10} {:>8}\n", part, "category", "recognised", "recall");
  for (const auto& [category, counts] : t.recall) {
    hit += counts.first;
    total += counts.second;
    const double r = 100.0 * counts.first / counts.second;
    std::cout << fmt::format("{:<24} {:>4} / {:<4} {:>7.1f}%\n", category, counts.first, counts.second, r);
  }
  std::cout << fmt::format("{:<24} {:>4} / {:<4} {:>7.1f}%\n", "all failures", hit, total,
                           total ? 100.0 * hit / total : 0.0);
  std::cout << fmt::format("false alarms on {} clean logs: {}\n", t.clean, t.false_alarms);
}

TEST(RealCorpus, RecallPerCategoryAndNoFalseAlarmsOnTheLogsTheRulesWereWrittenOn) {
  const Tally t = tally([](const Case& c) { return c.split != "heldout"; });
  for (const auto& m : t.missed) std::cout << "  missed " << m << "\n";
  for (const auto& a : t.alarms) ADD_FAILURE() << "false alarm on " << a;
  print("in-sample and train logs (the rules were written on these)", t);
  for (const auto& [category, counts] : t.recall) {
    EXPECT_GE(100.0 * counts.first / counts.second, 95.0) << category;
  }
  EXPECT_EQ(t.false_alarms, 0);
}

// The recall over every failure of a tally, in percent (0 when it has none).
double recall_of_all(const Tally& t) {
  int hit = 0;
  int total = 0;
  for (const auto& [category, counts] : t.recall) {
    hit += counts.first;
    total += counts.second;
  }
  EXPECT_GT(total, 0);
  return total ? 100.0 * hit / total : 0.0;
}

// The held-out logs: never read while writing rules. Their misses are counted, not listed, so that a rule is not
// written from one by accident (set GPUSAGE_CORPUS_LIST_HELDOUT=1 to list them, e.g. when the split is redone).
TEST(RealCorpus, HeldOutRecallIsReportedAndKeepsItsFloor) {
  const Tally t = tally([](const Case& c) { return c.split == "heldout"; });
  if (std::getenv("GPUSAGE_CORPUS_LIST_HELDOUT") != nullptr) {
    for (const auto& m : t.missed) std::cout << "  missed " << m << "\n";
    for (const auto& a : t.alarms) std::cout << "  false alarm on " << a << "\n";
  }
  print("held-out logs (never read while writing rules)", t);
  // Floors at the figures measured (README): a change that loses held-out logs fails.
  EXPECT_GE(recall_of_all(t), kAllHeldOutRecallFloor);
  EXPECT_LE(t.false_alarms, kHeldOutFalseAlarmCeiling);
  std::set<std::string> first_rows;
  for (const auto& c : corpus()) {
    if (c.split == "heldout" && first_rows.size() < kHeldOutRowsOfTheFirstFloor) first_rows.insert(c.file);
  }
  const Tally first = tally([&](const Case& c) { return first_rows.count(c.file) > 0; });
  EXPECT_GE(recall_of_all(first), kHeldOutRecallFloor);
  EXPECT_LE(first.false_alarms, kHeldOutFalseAlarmCeiling);
  for (const auto& [category, floor] : held_out_category_floors()) {
    const auto it = t.recall.find(category);
    ASSERT_NE(it, t.recall.end()) << category;
    EXPECT_GE(100.0 * it->second.first / it->second.second, floor) << category;
  }
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
