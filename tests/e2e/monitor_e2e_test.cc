// The whole monitoring path on loopback, with the real programs: plumb exporter (fed by a
// stand-in nvidia-smi printing a hot, nearly full GPU, and by a growing training events file
// with slow collectives and one slow operator), a static scrape of recorded dcgm-exporter and
// npu-exporter text, the real Prometheus evaluating `plumb alerts rules`, the real Alertmanager
// calling `plumb alert-relay`, and a fake Feishu bot (in this process) receiving the message.
// Bounded in time; every process is stopped by its Service when the test ends.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exporter/http_server.h"
#include "support/processes.h"
#include "support/service.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kPlumb = PLUMB_BIN;
const std::string kFixtures = std::string(PLUMB_TEST_FIXTURES) + "/exporter";

// Feishu's custom-bot endpoint as far as the relay can tell: it answers {"code":0} and keeps
// every body it was sent.
class FakeFeishu {
 public:
  FakeFeishu()
      : server_({.listen = "127.0.0.1:0"}, [this](const exporter::HttpRequest& r) {
          std::lock_guard lock(mutex_);
          bodies_.push_back(r.body);
          paths_.push_back(r.path);
          return exporter::HttpResponse{200, "application/json", R"({"code":0,"msg":"success"})", {}};
        }) {
    server_.start();
  }
  int port() const { return server_.port(); }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mutex_);
    return bodies_;
  }
  std::vector<std::string> paths() {
    std::lock_guard lock(mutex_);
    return paths_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> bodies_;
  std::vector<std::string> paths_;
  exporter::HttpServer server_;
};

// A training job's events: 40 ordinary steps at once (the rolling medians, over 100 steps, settle), then one step
// every 250 ms whose `aten::mm` takes 5x its median and whose allreduce moves 64 MiB over 8 ranks
// in 0.5 s: busbw = 64 MiB / 0.5 s * 2 * 7 / 8 = 235 MB/s = 1.9 Gbit/s, under the 10 Gbit/s line.
class EventWriter {
 public:
  explicit EventWriter(const std::string& path) : path_(path) {
    for (int step = 1; step <= 40; ++step) append(step, 0.010, 0.002);
    thread_ = std::thread([this] {
      for (int step = 41; !stop_ && step < 400; ++step) {
        append(step, 0.050, 0.5);
        std::this_thread::sleep_for(milliseconds(250));
      }
    });
  }
  ~EventWriter() {
    stop_ = true;
    thread_.join();
  }

 private:
  void append(int step, double mm_seconds, double allreduce_seconds) {
    nlohmann::json e = {
        {"schema", "plumb.train-events/1"},
        {"time", 1.7e9 + step},
        {"step", step},
        {"step_seconds", 1.0},
        {"tokens", 524288},
        {"rank", 0},
        {"world_size", 8},
        {"device", "0"},
        {"memory", {{"allocated_bytes", 40e9}, {"reserved_bytes", 60e9}, {"peak_bytes", 62e9}}},
        {"operators", {{"aten::mm", mm_seconds}, {"aten::add", 0.001}}},
        {"collectives",
         {{{"collective", "allreduce"}, {"bytes", 64 << 20}, {"seconds", allreduce_seconds},
           {"ranks", 8}, {"layer", "node"}}}}};
    std::ofstream(path_, std::ios::app) << e.dump() << "\n";
  }

  std::string path_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string prometheus_config(int exporter, int statics, int alertmanager, const std::string& rules) {
  return "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
         "rule_files: ['" + rules + "']\n"
         "alerting:\n  alertmanagers:\n    - static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(alertmanager) + "']}]\n"
         "scrape_configs:\n"
         "  - job_name: plumb\n    static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(exporter) + "']}]\n"
         "  - job_name: dcgm\n    metrics_path: /dcgm.txt\n    static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(statics) + "']}]\n"
         "  - job_name: npu\n    metrics_path: /npu.txt\n    static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(statics) + "']}]\n";
}

std::string alertmanager_config(int relay) {
  return "route:\n  receiver: relay\n  group_by: [alertname, host, device]\n"
         "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
         "receivers:\n  - name: relay\n    webhook_configs:\n"
         "      - url: http://127.0.0.1:" + std::to_string(relay) + "/alertmanager\n"
         "        send_resolved: true\n";
}

// The recorded exporter text as a scrape would find it now: the millisecond timestamps that
// npu-exporter writes are months old, and Prometheus drops samples that old.
void copy_without_timestamps(const std::string& from, const std::string& to) {
  std::ifstream in(from);
  std::ofstream out(to);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') {
      const size_t brace = line.rfind('}');
      const size_t value = line.find(' ', brace == std::string::npos ? 0 : brace);
      const size_t stamp = value == std::string::npos ? value : line.find(' ', value + 1);
      if (stamp != std::string::npos) line.resize(stamp);
    }
    out << line << "\n";
  }
}

bool answers(const std::string& url) {
  int status = 0;
  http(url, &status);
  return status == 200;
}

// alertname -> the states Prometheus has shown for it, in the order first seen.
using StatesSeen = std::map<std::string, std::vector<std::string>>;

void note_alerts(int prometheus, StatesSeen& seen, std::map<std::string, std::string>& active_at) {
  const std::string body = http("http://127.0.0.1:" + std::to_string(prometheus) + "/api/v1/alerts");
  if (body.empty()) return;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return;
  for (const nlohmann::json& a : j["data"]["alerts"]) {
    const std::string name = a["labels"]["alertname"];
    const std::string state = a["state"];
    std::vector<std::string>& states = seen[name];
    if (states.empty() || states.back() != state) states.push_back(state);
    active_at[name] = a.value("activeAt", "");
  }
}

double query_value(int prometheus, const std::string& promql) {
  std::string encoded;
  for (char c : promql) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      encoded += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      encoded += hex;
    }
  }
  const std::string body = http("http://127.0.0.1:" + std::to_string(prometheus) +
                                "/api/v1/query?query=" + encoded);
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || j["data"]["result"].empty()) return -1;
  return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(MonitorE2E, AlertsGoPendingThenFiringAndReachTheChatThroughAlertmanagerAndTheRelay) {
  const std::string dir = temp_dir("monitor-e2e");
  // The stand-in nvidia-smi's answer: GPU 0 hot (88 °C) with 95% of its HBM used, GPU 1 fine.
  write_file(dir + "/nvidia-smi.csv",
             "index, uuid, name, memory.used [MiB], memory.total [MiB], temperature.gpu, "
             "power.draw [W], utilization.gpu [%]\n"
             "0, GPU-0a, NVIDIA H100 80GB HBM3, 77824 MiB, 81920 MiB, 88, 650.5 W, 99 %\n"
             "1, GPU-1b, NVIDIA H100 80GB HBM3, 20480 MiB, 81920 MiB, 61, 410.0 W, 97 %\n");
  copy_without_timestamps(kFixtures + "/dcgm_exporter_sample.prom", dir + "/dcgm.txt");
  copy_without_timestamps(kFixtures + "/npu_exporter_sample.prom", dir + "/npu.txt");
  const std::string events = dir + "/train-events.jsonl";
  EventWriter writer(events);

  const int exporter_port = free_port();
  const int static_port = free_port();
  const int prometheus_port = free_port();
  const int alertmanager_port = free_port();
  const int relay_port = free_port();
  FakeFeishu feishu;

  ASSERT_EQ(run_command(kPlumb + " alerts rules --hbm-for 3s --temp-for 3s --bandwidth-for 3s "
                        "--op-for 3s -o " + dir + "/rules.yml").exit_code, 0);
  write_file(dir + "/prometheus.yml",
             prometheus_config(exporter_port, static_port, alertmanager_port, dir + "/rules.yml"));
  write_file(dir + "/alertmanager.yml", alertmanager_config(relay_port));

  Service exporter("exporter",
                   "env PLUMB_FAKE_NVIDIA_SMI=" + dir + "/nvidia-smi.csv " + kPlumb +
                       " exporter --listen 127.0.0.1:" + std::to_string(exporter_port) +
                       " --host node-e2e --device-source nvidia-smi --nvidia-smi " + kFixtures +
                       "/bin/nvidia-smi --device-interval 1 --events " + events +
                       " --events-interval 0.5 --median-window 100",
                   dir + "/exporter.log");
  Service statics("static", "python3 -m http.server --bind 127.0.0.1 " +
                                std::to_string(static_port) + " --directory " + dir,
                  dir + "/static.log");
  Service relay("relay",
                kPlumb + " alert-relay --listen 127.0.0.1:" + std::to_string(relay_port) +
                    " --to feishu:http://127.0.0.1:" + std::to_string(feishu.port()) +
                    "/open-apis/bot/v2/hook/e2e-token",
                dir + "/relay.log");
  Service alertmanager("alertmanager",
                       "prometheus-alertmanager --config.file=" + dir +
                           "/alertmanager.yml --storage.path=" + dir +
                           "/am-data --web.listen-address=127.0.0.1:" +
                           std::to_string(alertmanager_port) + " --cluster.listen-address=",
                       dir + "/alertmanager.log");
  Service prometheus("prometheus",
                     "prometheus --config.file=" + dir + "/prometheus.yml --storage.tsdb.path=" +
                         dir + "/prom-data --web.listen-address=127.0.0.1:" +
                         std::to_string(prometheus_port),
                     dir + "/prometheus.log");

  const std::string prom = "http://127.0.0.1:" + std::to_string(prometheus_port);
  ASSERT_TRUE(wait_for([&] { return answers(prom + "/-/ready"); }, seconds(30)))
      << prometheus.log();
  ASSERT_TRUE(wait_for([&] { return answers("http://127.0.0.1:" + std::to_string(exporter_port) +
                                            "/healthz"); }, seconds(10)))
      << exporter.log();

  StatesSeen seen;
  std::map<std::string, std::string> active_at;
  const auto delivered = [&] {
    for (const std::string& b : feishu.bodies()) {
      if (b.find("PlumbHbmHigh") != std::string::npos) return true;
    }
    return false;
  };
  const std::vector<std::string> expected = {"PlumbHbmHigh", "PlumbDeviceHot",
                                             "PlumbCollectiveBandwidthLow", "PlumbOperatorSlow"};
  const bool all_fired = wait_for(
      [&] {
        note_alerts(prometheus_port, seen, active_at);
        for (const std::string& name : expected) {
          if (!contains(seen[name], "firing")) return false;
        }
        return delivered();
      },
      seconds(90));
  ASSERT_TRUE(all_fired) << "exporter:\n" << exporter.log() << "\nrelay:\n" << relay.log()
                         << "\nalertmanager:\n" << alertmanager.log();

  // Each went pending first (its for: is 3 s at a 1 s evaluation), and nothing fired that should
  // not have: 88 °C is under the 95 °C throttling line, and GPU 1 is fine.
  for (const std::string& name : expected) {
    EXPECT_EQ(seen[name].front(), "pending") << name;
  }
  EXPECT_TRUE(seen["PlumbDeviceThrottling"].empty());
  EXPECT_LT(query_value(prometheus_port, "ALERTS{alertname=\"PlumbHbmHigh\",device=\"1\"}"), 0);

  // The static scrape of recorded dcgm-exporter text, normalised by the recording rules.
  EXPECT_EQ(query_value(prometheus_port, "plumb:device_temperature_celsius{host=\"dcgm-exporter-wwwjh\",device=\"1\"}"), 44);
  EXPECT_EQ(query_value(prometheus_port, "plumb:device_temperature_celsius{host=\"dcgm-exporter-wwwjh\",device=\"2\"}"), 45);
  // The exporter's own devices, in base units.
  EXPECT_EQ(query_value(prometheus_port, "plumb:device_hbm_used_bytes{host=\"node-e2e\",device=\"0\"}"),
            77824.0 * 1024 * 1024);

  // The chat message names the alert, the host, the device and when it started.
  std::string message;
  for (const std::string& b : feishu.bodies()) {
    if (b.find("PlumbHbmHigh") != std::string::npos) message = b;
  }
  EXPECT_NE(message.find("FIRING PlumbHbmHigh warning host=node-e2e device=0"), std::string::npos)
      << message;
  // When it started (Alertmanager's startsAt: the time it fired, a few seconds after Prometheus'
  // activeAt, the start of pending), in UTC to the second, on the day it went pending.
  std::smatch started;
  ASSERT_TRUE(std::regex_search(message, started,
                                std::regex(R"(started (\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d UTC)")))
      << message;
  EXPECT_EQ(started[1], active_at["PlumbHbmHigh"].substr(0, 10)) << active_at["PlumbHbmHigh"];
  EXPECT_EQ(feishu.paths().front(), "/open-apis/bot/v2/hook/e2e-token");

  EXPECT_EQ(prometheus.stop(), 0);
  EXPECT_EQ(alertmanager.stop(), 0);
  EXPECT_EQ(relay.stop(), 0) << relay.log();
  EXPECT_EQ(exporter.stop(), 0) << exporter.log();
  statics.stop();
  EXPECT_TRUE(processes_with(dir).empty());
  if (std::getenv("PLUMB_E2E_SHOW")) std::cout << message << "\n" << relay.log() << exporter.log();
}


// What the issue asks of bad input, with the real binary: a device tool that hangs, one that
// prints garbage, a malformed events line — each a clear message, and the exporter keeps serving.
TEST(MonitorE2E, AHungToolGarbageAndAMalformedLineAreMessagesAndTheExporterKeepsServing) {
  const std::string dir = temp_dir("monitor-bad-input");
  write_file(dir + "/hang.csv", "#hang\n");
  write_file(dir + "/garbage.txt", "#garbage\n");
  write_file(dir + "/events.jsonl",
             "{\"schema\":\"plumb.train-events/1\",\"step\":1,\"step_seconds\":1.5}\n"
             "{\"schema\":\"plumb.train-events/1\",\"step\":\"two\",\"step_seconds\":1.5}\n"
             "{\"schema\":\"plumb.train-events/1\",\"step\":3,\"step_seconds\":1.5}\n");
  const int port = free_port();
  Service exporter("exporter",
                   "env PLUMB_FAKE_NVIDIA_SMI=" + dir + "/hang.csv PLUMB_FAKE_NPU_SMI=" + dir +
                       "/garbage.txt " + kPlumb + " exporter --listen 127.0.0.1:" +
                       std::to_string(port) + " --host h --device-source nvidia-smi --nvidia-smi " +
                       kFixtures + "/bin/nvidia-smi --tool-timeout 0.5 --device-interval 1 --events " +
                       dir + "/events.jsonl --events-interval 0.2",
                   dir + "/exporter.log");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::string metrics;
  ASSERT_TRUE(wait_for([&] {
    metrics = http(url);
    return metrics.find("plumb_exporter_source_errors_total{source=\"nvidia-smi\"} 2") !=
           std::string::npos;
  }, seconds(20))) << metrics << exporter.log();
  // Every scrape answered while the tool hung (0.5 s each time), with what the other source read.
  EXPECT_NE(metrics.find("plumb_exporter_source_up{source=\"nvidia-smi\"} 0"), std::string::npos);
  EXPECT_NE(metrics.find("plumb_train_step{host=\"h\",rank=\"\",device=\"\"} 3"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("plumb_train_events_malformed_total{host=\"h\"} 1"), std::string::npos);
  EXPECT_EQ(metrics.find("plumb_device_"), std::string::npos);  // absent, never 0
  const std::string log = exporter.log();
  EXPECT_NE(log.find("plumb exporter: nvidia-smi: no answer within 0.5 s; no values from it yet\n"),
            std::string::npos) << log;
  EXPECT_NE(log.find("plumb exporter: events " + dir + "/events.jsonl:2: 'step' is a string"),
            std::string::npos) << log;
  EXPECT_EQ(exporter.stop(), 0) << log;

  // npu-smi printing control characters and invalid UTF-8: one message, the exporter serves on.
  const int port2 = free_port();
  Service garbage("exporter",
                  "env PLUMB_FAKE_NPU_SMI=" + dir + "/garbage.txt " + kPlumb +
                      " exporter --listen 127.0.0.1:" + std::to_string(port2) +
                      " --device-source npu-smi --npu-smi " + kFixtures + "/bin/npu-smi",
                  dir + "/garbage.log");
  const std::string url2 = "http://127.0.0.1:" + std::to_string(port2) + "/metrics";
  // Its first collect failed (up is 0 before any collect too: the errors say one ran); the
  // exporter logs a failure before a scrape can see it.
  ASSERT_TRUE(wait_for([&] {
    return http(url2).find("plumb_exporter_source_errors_total{source=\"npu-smi\"} 1") !=
           std::string::npos;
  }, seconds(20))) << garbage.log();
  EXPECT_NE(garbage.log().find("plumb exporter: npu-smi info: "), std::string::npos) << garbage.log();
  EXPECT_EQ(garbage.stop(), 0);
  EXPECT_TRUE(processes_with(dir).empty());
}

}  // namespace
}  // namespace plumb::test
