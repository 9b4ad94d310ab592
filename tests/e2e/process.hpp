// A program started in the background for an end-to-end test (a monitor, a Prometheus server, gpusage run),
// stdin from /dev/null and its output in files; stopped with a signal and reaped when the test ends,
// whatever happened. The one spawner of the e2e tests.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace gpusage::testing {

class Process {
 public:
  // argv[0] is the program's path, or a name looked up in PATH. `env` entries (NAME=value) replace the
  // inherited ones of the same name.
  Process(std::vector<std::string> argv, const std::vector<std::string>& env, const std::string& out_path,
          const std::string& err_path) {
    std::vector<std::string> environment = env;
    for (char** e = environ; *e; ++e) {
      std::string_view entry(*e);
      bool replaced = false;
      for (const auto& mine : env)
        if (entry.substr(0, entry.find('=') + 1) == std::string_view(mine).substr(0, mine.find('=') + 1)) replaced = true;
      if (!replaced) environment.emplace_back(entry);
    }
    std::vector<char*> envp, args;
    for (auto& e : environment) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() { stop(SIGKILL); }

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool running() {
    int status = 0;
    return pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == 0;
  }
  // Waits for the program to end; its exit code (128+N for signal N, as a shell reports it).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Sends `signal` and waits; returns the wait status (-1 when it was not running).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace gpusage::testing
