#include "monitor/prometheus_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>

#include "core/common/error.hpp"

namespace gpusage::monitor {

ListenAddress parse_listen_address(const std::string& text) {
  ListenAddress address{"127.0.0.1", 0};
  std::string port = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) address.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);  // [::1]:9400
  int value = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 || value > 65535)
    throw InputError(
        fmt::format("--prometheus '{}': expected HOST:PORT or PORT with a port from 0 to 65535 "
                    "(e.g. 127.0.0.1:9400)",
                    text));
  address.port = value;
  return address;
}

struct PrometheusServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::mutex mutex;
  std::string text = "# gpusage: no sample yet\n";
  int port = 0;
  std::atomic<bool> finished{false};
};

PrometheusServer::PrometheusServer(const ListenAddress& address) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  // httplib's default adds SO_REUSEPORT, which would let a second gpusage share the port and split scrapes
  // between them; SO_REUSEADDR alone allows a quick restart but not two listeners.
  impl.server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  impl.server.Get("/metrics", [&impl](const httplib::Request&, httplib::Response& response) {
    std::string body;
    {
      std::lock_guard lock(impl.mutex);
      body = impl.text;
    }
    response.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  impl.server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("gpusage monitor: metrics at /metrics\n", "text/plain");
  });
  if (address.port == 0) {
    impl.port = impl.server.bind_to_any_port(address.host);
  } else if (impl.server.bind_to_port(address.host, address.port)) {
    impl.port = address.port;
  } else {
    impl.port = -1;
  }
  if (impl.port <= 0)
    throw InputError(
        fmt::format("--prometheus {}:{}: cannot listen there (address in use, or not an address of "
                    "this machine)",
                    address.host, address.port));
  impl.thread = std::thread([&impl] {
    impl.server.listen_after_bind();
    impl.finished = true;
  });
}

PrometheusServer::~PrometheusServer() {
  // httplib's stop() does nothing until the accept loop runs, so wait for it to start (or to have failed).
  while (!impl_->server.is_running() && !impl_->finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void PrometheusServer::publish(std::string metrics_text) {
  std::lock_guard lock(impl_->mutex);
  impl_->text = std::move(metrics_text);
}

int PrometheusServer::port() const { return impl_->port; }

}  // namespace gpusage::monitor
