// `--prometheus HOST:PORT`: serves GET /metrics from a background thread. The sampling loop publishes the
// latest exposition text; a scrape only copies it, so it never waits on NVML.
#pragma once

#include <memory>
#include <string>

namespace gpusage::monitor {

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "HOST:PORT", ":PORT" or "PORT" (host 127.0.0.1: exposing metrics beyond the machine is an explicit choice).
// Port 0 picks a free port. Throws InputError for anything else.
ListenAddress parse_listen_address(const std::string& text);

class PrometheusServer {
 public:
  // Binds now (so a bad address fails before sampling starts) and serves on a thread.
  // Throws InputError when the address cannot be bound.
  explicit PrometheusServer(const ListenAddress& address);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  void publish(std::string metrics_text);
  int port() const;  // the bound port (useful with port 0)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusage::monitor
