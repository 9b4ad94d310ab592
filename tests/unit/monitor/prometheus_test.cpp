#include <gtest/gtest.h>
#include <httplib.h>

#include "core/common/error.hpp"
#include "monitor/prometheus_server.hpp"

namespace gpusage::monitor {
namespace {

TEST(ListenAddress, DefaultsToLoopback) {
  ListenAddress a = parse_listen_address("9400");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9400);
  a = parse_listen_address(":9401");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9401);
  a = parse_listen_address("0.0.0.0:9402");
  EXPECT_EQ(a.host, "0.0.0.0");
  a = parse_listen_address("[::1]:9403");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 9403);
}

TEST(ListenAddress, RejectsABadPortWithTheValue) {
  for (const char* bad : {"localhost", "127.0.0.1:", "127.0.0.1:70000", "127.0.0.1:94x"}) {
    try {
      parse_listen_address(bad);
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(PrometheusServer, ServesTheLatestPublishedText) {
  PrometheusServer server({"127.0.0.1", 0});
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  server.publish("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 87\n");
  auto response = client.Get("/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 87\n");
  EXPECT_EQ(response->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  server.publish("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 12\n");
  response = client.Get("/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 12\n");
  EXPECT_EQ(client.Get("/nothing-here")->status, 404);
}

TEST(PrometheusServer, APortInUseIsAnInputError) {
  PrometheusServer first({"127.0.0.1", 0});
  EXPECT_THROW(PrometheusServer({"127.0.0.1", first.port()}), InputError);
}

}  // namespace
}  // namespace gpusage::monitor
