// Every example in every command's --help and in README.md runs and exits 0 (issue 50). The examples run in
// a scratch directory as a newcomer would type them, on a scripted RTX 5090 (the NVML stub), with the files
// they name made there first (a config.json, a training log, a trainer that OOMs above batch 64, ...). An
// example that needs what CTest cannot give (PyTorch, a terminal, the network, a server that runs until
// stopped) is listed in kNotRun with the reason; every other example must run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

namespace fs = std::filesystem;

// Examples not run here, by their text after "gpusage ", and why.
const std::map<std::string, std::string> kNotRun = {
    {"monitor", "the interactive view runs until q"},
    {"monitor --format csv --interval 0.5 --log run.csv", "samples until stopped (monitor --once is run)"},
    {"monitor --prometheus 127.0.0.1:9400", "serves until stopped (test_e2e_prometheus scrapes it)"},
    {"validate data/validation/published.csv --cv gpu --summary",
     "a minute of one core; test_e2e_plan runs the same cross-validation"},
    {"run --hang-after 600 --kill-on-hang -- torchrun --nproc-per-node 8 train.py",
     "needs torchrun (PyTorch)"},
    {"run --log-dir runs/r1 --model gpt2 --batch 8 --gpus 2 -- torchrun --nproc-per-node 2 train.py",
     "needs torchrun (PyTorch)"},
    {"fit-batch --steps 3 --try-timeout 300 -- torchrun --nproc-per-node 2 train.py --batch {batch}",
     "needs torchrun (PyTorch)"},
    {"run --notify-url https://ntfy.sh/my-runs --hang-after 900 -- python train.py", "posts to the network"},
    {"run --prometheus 127.0.0.1:9400 -- python train.py", "binds a fixed port that another test may hold"},
};

bool is_bench(const std::string& example) { return example.rfind("bench ", 0) == 0; }

constexpr const char* kPipe = " | gpusage ";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The text after "gpusage " of every example line in `text`; a trailing backslash continues the line and
// "  # ..." is a comment. `in_fences`: only inside ``` blocks (README). A line that pipes into gpusage
// ("cat train.log | gpusage doctor --log -") is kept whole: run_in gives gpusage what the left side prints.
std::vector<std::string> examples_in(const std::string& text, bool in_fences) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line, pending;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (trim(line).rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (in_fences && !fenced) continue;
    std::string t = trim(line);
    if (!pending.empty()) {
      t = pending + " " + t;
      pending.clear();
    } else if (t.rfind("$ ", 0) == 0) {
      t = t.substr(2);
    }
    const bool piped = t.find(kPipe) != std::string::npos;
    if (t.rfind("gpusage ", 0) != 0 && t != "gpusage" && !piped) continue;
    if (const auto hash = t.find("  #"); hash != std::string::npos) t = trim(t.substr(0, hash));
    if (!t.empty() && t.back() == '\\') {
      pending = trim(t.substr(0, t.size() - 1));
      continue;
    }
    out.push_back(piped ? t : t == "gpusage" ? "" : t.substr(8));
  }
  return out;
}

class Examples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(GPUSAGE_BINARY_DIR) / ("e2e-examples-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home" / "venv" / "bin");
    fs::create_directories(dir_ / "bin");
    fs::create_directory_symlink(fs::path(GPUSAGE_SOURCE_DIR) / "tests",
                                 dir_ / "tests");  // README's fixtures
    fs::create_symlink("/usr/bin/python3", dir_ / "bin" / "python");
    fs::create_symlink("/usr/bin/python3", dir_ / "home" / "venv" / "bin" / "python");
    // A trainer that runs out of memory above batch 64 (fit-batch's examples search for that edge).
    std::ofstream(dir_ / "train.py")
        << "import sys\n"
           "batch = next((int(a) for a in sys.argv[1:] if a.isdigit()), 8)\n"
           "print('epoch 1 step 10 loss 2.3', flush=True)\n"
           "if batch > 64:\n"
           "    print('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
           "2.00 GiB', file=sys.stderr)\n"
           "    sys.exit(1)\n";
    fs::copy_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/workloads/resnet18.json",
                  dir_ / "convnext.json");
    fs::copy_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/clean.log",
                  dir_ / "train.log");
    fs::copy_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/report/bench-rtx5090.json",
                  dir_ / "run.json");
    // The axolotl config --train-config's examples name: axolotl's own QLoRA example.
    fs::copy_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/train_configs/axolotl_llama3_qlora.yml",
                  dir_ / "qlora.yml");
    const std::string llama = R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
      "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000})";
    std::ofstream(dir_ / "config.json") << llama;
    const fs::path gemma = dir_ / "home/.cache/huggingface/hub/models--google--gemma-2-2b";
    fs::create_directories(gemma / "snapshots" / "0");
    std::ofstream(gemma / "snapshots" / "0" / "config.json")
        << R"({"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
              "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000})";
    // A few rows of the validation CSV stand for the user's own runs.
    std::ifstream published(std::string(GPUSAGE_SOURCE_DIR) + "/data/validation/published.csv");
    std::ofstream runs(dir_ / "my-runs.csv");
    std::string row;
    for (int i = 0; i < 4 && std::getline(published, row); ++i) runs << row << "\n";
    runs.close();
    // The monitor log report --monitor-log reads, written by monitor itself.
    const CliResult log = run_in("monitor --once --log run.jsonl");
    ASSERT_EQ(log.exit_code, 0) << log.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run_in(const std::string& example) {
    // export: the shell expands the examples' ~ with this HOME.
    const std::string env = "cd " + dir_.string() + " && export HOME=" + (dir_ / "home").string() +
                            " PATH=" + (dir_ / "bin").string() +
                            ":/usr/bin:/bin && GPUSAGE_NVML_LIBRARY=" + GPUSAGE_NVML_STUB_MODERN +
                            " GPUSAGE_NVML_STUB_SCRIPT=" + fixture("doctor/nvml/rtx5090.json") +
                            " HF_HUB_CACHE= HF_HOME= XDG_CACHE_HOME= COLUMNS=120 timeout 300";
    const std::size_t pipe = example.find(kPipe);
    if (pipe == std::string::npos) return run_cli(example, env);
    // What the left side prints becomes gpusage's standard input (run_cli runs the binary itself).
    const std::string producer = "cd " + dir_.string() + " && (" + example.substr(0, pipe) + ") > stdin.txt";
    EXPECT_EQ(std::system(producer.c_str()), 0) << producer;
    return run_cli(example.substr(pipe + std::string(kPipe).size()) + " < stdin.txt", env);
  }

  static void run_all(const std::vector<std::string>& examples, const std::string& where) {
    for (const std::string& example : examples) {
      if (kNotRun.count(example)) continue;
      if (is_bench(example))
        continue;  // gpusage-bench (LibTorch): test_e2e_bench runs bench where it is built
      const CliResult r = run_in(example);
      EXPECT_EQ(r.exit_code, 0) << where << ": gpusage " << example << "\n" << r.err << r.out.substr(0, 2000);
    }
  }

  static fs::path dir_;
};
fs::path Examples::dir_;

const std::vector<std::string> kCommands = {"",        "guide",  "gpus",  "gpus show", "plan", "validate",
                                            "monitor", "doctor", "bench", "report",    "run",  "fit-batch"};

TEST_F(Examples, EveryHelpExampleRuns) {
  std::size_t count = 0;
  for (const std::string& command : kCommands) {
    const CliResult help = run_cli(command + " --help");
    ASSERT_EQ(help.exit_code, 0) << command;
    const std::vector<std::string> examples = examples_in(help.out, false);
    count += examples.size();
    run_all(examples, "gpusage " + command + " --help");
  }
  EXPECT_GE(count, 30u);
}

TEST_F(Examples, EveryReadmeExampleRuns) {
  const std::vector<std::string> examples =
      examples_in(read_text(std::string(GPUSAGE_SOURCE_DIR) + "/README.md"), true);
  EXPECT_GE(examples.size(), 30u);
  run_all(examples, "README.md");
}

// A skipped example must still be one: an entry nobody's help or README shows any more is stale.
TEST_F(Examples, EverySkippedExampleStillExists) {
  std::set<std::string> all;
  for (const std::string& command : kCommands) {
    for (const std::string& e : examples_in(run_cli(command + " --help").out, false)) all.insert(e);
  }
  for (const std::string& e : examples_in(read_text(std::string(GPUSAGE_SOURCE_DIR) + "/README.md"), true))
    all.insert(e);
  for (const auto& [example, why] : kNotRun) EXPECT_TRUE(all.count(example)) << example << " (" << why << ")";
}

}  // namespace
}  // namespace gpusage::testing
