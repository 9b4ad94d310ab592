#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/device/host.hpp"

namespace gpusage::device {
namespace {

namespace fs = std::filesystem;

// A fake /proc in a temporary directory, rewritten between readings.
class FakeProc {
 public:
  FakeProc() : root_(fs::temp_directory_path() / ("gpusage-proc-" + std::to_string(::getpid()) + "-" +
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(root_);
  }
  ~FakeProc() { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(HostReader, CpuUtilisationIsTheBusyShareOfTicksBetweenReadings) {
  FakeProc proc;
  proc.write("stat", "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 350 50 0 0 0 0 0\n");
  proc.write("meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n");
  HostReader reader(proc.root());
  HostSample first = reader.read();
  EXPECT_FALSE(first.cpu_percent);  // a rate needs two readings
  EXPECT_EQ(first.cpu_count, 2u);
  EXPECT_EQ(first.memory_total_bytes, 16000000ULL * 1024);
  EXPECT_EQ(first.memory_used_bytes, 12000000ULL * 1024);
  // +300 busy (user 200, system 100), +100 idle, +0 iowait: 75 % busy.
  proc.write("stat", "cpu  300 0 200 800 100 0 0 0 0 0\n");
  HostSample second = reader.read();
  ASSERT_TRUE(second.cpu_percent);
  EXPECT_DOUBLE_EQ(*second.cpu_percent, 75.0);
}

TEST(HostReader, ProcessCpuIsTicksPerSecondOfWallTime) {
  FakeProc proc;
  // Field 2 contains spaces and a parenthesis; utime (14) = 100, stime (15) = 50.
  std::string fields = " S 1 1 1 0 -1 0 0 0 0 0 ";
  proc.write("42/stat", "42 (python (data)" + fields + "100 50 0 0 20 0 8 0\n");
  proc.write("42/comm", "python\n");
  HostReader reader(proc.root());
  auto first = reader.process_cpu({42, 7}, 10.0);
  EXPECT_FALSE(first.at(42));
  EXPECT_FALSE(first.at(7));  // no such process
  double ticks_per_s = static_cast<double>(::sysconf(_SC_CLK_TCK));
  proc.write("42/stat", "42 (python (data)" + fields + std::to_string(100 + static_cast<int>(ticks_per_s)) + " 50 0 0 20 0 8 0\n");
  auto second = reader.process_cpu({42}, 12.0);  // one second of CPU in two of wall time
  ASSERT_TRUE(second.at(42));
  EXPECT_DOUBLE_EQ(*second.at(42), 50.0);
  EXPECT_EQ(reader.process_name(42), "python");
}

TEST(HostReader, ReadsTheLiveProcFilesystem) {
  HostReader reader;
  HostSample host = reader.read();
  ASSERT_TRUE(host.memory_total_bytes);
  EXPECT_GT(*host.memory_total_bytes, 0u);
  EXPECT_GE(host.cpu_count.value_or(0), 1u);
}

}  // namespace
}  // namespace gpusage::device
