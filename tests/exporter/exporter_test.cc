#include "exporter/exporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/error.h"
#include "exporter/exposition.h"
#include "exporter/series.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using Clock = std::chrono::steady_clock;

class FakeSource : public Source {
 public:
  FakeSource(std::string name, double interval, std::function<Families()> collect)
      : name_(std::move(name)), interval_(interval), collect_(std::move(collect)) {}
  std::string name() const override { return name_; }
  double interval_seconds() const override { return interval_; }
  Families collect() override { return collect_(); }

 private:
  std::string name_;
  double interval_;
  std::function<Families()> collect_;
};

Families temperature(double celsius) {
  return {{series::kTemperature, "Device temperature, degrees Celsius", "gauge",
           {{{{"host", "n1"}, {"device", "0"}}, celsius, ""}}}};
}

// A clock the test moves; each collect of a source made by `timed` takes 0.25 s of it.
struct World {
  double now = 100;
  std::vector<std::string> log;
  ExporterSettings settings() {
    return {"1.2.3", [this] { return now; }, [this](const std::string& l) { log.push_back(l); }};
  }
  std::unique_ptr<Source> timed(std::string name, std::function<Families()> f) {
    return std::make_unique<FakeSource>(std::move(name), 5, [this, f] {
      now += 0.25;
      return f();
    });
  }
};

const std::string kOwnHeaders[] = {
    "# HELP plumb_exporter_source_up 1 when the source's last collect succeeded, 0 when it "
    "failed\n# TYPE plumb_exporter_source_up gauge\n",
    "# HELP plumb_exporter_source_age_seconds Seconds since the source's last good collect: the "
    "age of the values served\n# TYPE plumb_exporter_source_age_seconds gauge\n",
    "# HELP plumb_exporter_source_errors_total Collects of the source that failed\n"
    "# TYPE plumb_exporter_source_errors_total counter\n",
    "# HELP plumb_exporter_source_collect_seconds Seconds the source's last collect took\n"
    "# TYPE plumb_exporter_source_collect_seconds gauge\n",
    "# HELP plumb_exporter_build_info The plumb version serving these metrics; always 1\n"
    "# TYPE plumb_exporter_build_info gauge\n",
    "# HELP plumb_exporter_scrapes_total Answers to /metrics since the exporter started\n"
    "# TYPE plumb_exporter_scrapes_total counter\n"};

TEST(Exporter, ServesEachSourcesValuesThenItsOwnSeries) {
  World w;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(w.timed("nvidia-smi", [] { return temperature(45); }));
  sources.push_back(w.timed("events", [] {
    return Families{{series::kStep, "Last step", "gauge", {{{{"host", "n1"}, {"rank", "0"}}, 7, ""}}}};
  }));
  Exporter exporter(std::move(sources), w.settings());
  EXPECT_EQ(exporter.source_names(), (std::vector<std::string>{"nvidia-smi", "events"}));
  EXPECT_TRUE(exporter.collect_once());
  w.now = 110;
  EXPECT_EQ(exporter.metrics(),
            "# HELP plumb_device_temperature_celsius Device temperature, degrees Celsius\n"
            "# TYPE plumb_device_temperature_celsius gauge\n"
            "plumb_device_temperature_celsius{host=\"n1\",device=\"0\"} 45\n"
            "# HELP plumb_train_step Last step\n# TYPE plumb_train_step gauge\n"
            "plumb_train_step{host=\"n1\",rank=\"0\"} 7\n" +
                kOwnHeaders[0] +
                "plumb_exporter_source_up{source=\"nvidia-smi\"} 1\n"
                "plumb_exporter_source_up{source=\"events\"} 1\n" +
                kOwnHeaders[1] +
                "plumb_exporter_source_age_seconds{source=\"nvidia-smi\"} 9.75\n"
                "plumb_exporter_source_age_seconds{source=\"events\"} 9.5\n" +
                kOwnHeaders[2] +
                "plumb_exporter_source_errors_total{source=\"nvidia-smi\"} 0\n"
                "plumb_exporter_source_errors_total{source=\"events\"} 0\n" +
                kOwnHeaders[3] +
                "plumb_exporter_source_collect_seconds{source=\"nvidia-smi\"} 0.25\n"
                "plumb_exporter_source_collect_seconds{source=\"events\"} 0.25\n" +
                kOwnHeaders[4] + "plumb_exporter_build_info{version=\"1.2.3\"} 1\n" +
                kOwnHeaders[5] + "plumb_exporter_scrapes_total 1\n");
  EXPECT_NE(exporter.metrics().find("plumb_exporter_scrapes_total 2\n"), std::string::npos);
  EXPECT_EQ(w.log, std::vector<std::string>{});
}

// The previous values stay, up is 0, errors count, the age grows; one log line per change of
// message, and one when the source answers again.
TEST(Exporter, AFailingSourceKeepsItsPreviousValues) {
  World w;
  std::vector<std::string> outcomes = {"ok", "timeout", "timeout", "line 7", "ok"};
  std::size_t call = 0;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(w.timed("npu-smi", [&] {
    const std::string o = outcomes.at(call++);
    if (o == "timeout") throw Error("npu-smi: no answer within 5 s");
    if (o == "line 7") throw Error("npu-smi info: line 7: expected a chip row");
    return temperature(call == 1 ? 40 : 50);
  }));
  Exporter exporter(std::move(sources), w.settings());
  EXPECT_TRUE(exporter.collect_once());  // ends at 100.25
  w.now = 112;
  EXPECT_FALSE(exporter.collect_once());  // 12 s after the good one
  w.now = 130;
  EXPECT_FALSE(exporter.collect_once());
  const std::string text = exporter.metrics();
  EXPECT_NE(text.find("plumb_device_temperature_celsius{host=\"n1\",device=\"0\"} 40\n"),
            std::string::npos);
  EXPECT_NE(text.find("plumb_exporter_source_up{source=\"npu-smi\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("plumb_exporter_source_age_seconds{source=\"npu-smi\"} 30\n"),
            std::string::npos);
  EXPECT_NE(text.find("plumb_exporter_source_errors_total{source=\"npu-smi\"} 2\n"),
            std::string::npos);
  EXPECT_FALSE(exporter.collect_once());
  EXPECT_TRUE(exporter.collect_once());
  EXPECT_NE(exporter.metrics().find("plumb_device_temperature_celsius{host=\"n1\",device=\"0\"} 50\n"),
            std::string::npos);
  EXPECT_EQ(w.log, (std::vector<std::string>{
                       "plumb exporter: npu-smi: no answer within 5 s; serving its values from 12 s ago",
                       "plumb exporter: npu-smi info: line 7: expected a chip row; serving its "
                       "values from 30 s ago",
                       "plumb exporter: npu-smi: collecting again"}));
}

TEST(Exporter, ASourceThatNeverAnsweredHasNoAgeAndSaysSo) {
  World w;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(w.timed("probe", []() -> Families { throw std::runtime_error("bad_alloc"); }));
  Exporter exporter(std::move(sources), w.settings());
  EXPECT_FALSE(exporter.collect_once());
  const std::string text = exporter.metrics();
  EXPECT_EQ(text.find("plumb_exporter_source_age_seconds"), std::string::npos);
  EXPECT_NE(text.find("plumb_exporter_source_up{source=\"probe\"} 0\n"), std::string::npos);
  EXPECT_EQ(w.log, std::vector<std::string>{
                       "plumb exporter: probe: unexpected error: bad_alloc; no values from it yet"});
}

TEST(Exporter, AnswersTheEndpoints) {
  World w;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(w.timed("events", [] { return temperature(1); }));
  Exporter exporter(std::move(sources), w.settings());
  HttpRequest r{"GET", "/metrics", "/metrics", {}, ""};
  HttpResponse metrics = exporter.handle(r);
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics.body.find("plumb_exporter_build_info{version=\"1.2.3\"} 1\n"), std::string::npos);
  r.method = "HEAD";
  EXPECT_EQ(exporter.handle(r).status, 200);
  r.path = "/healthz";
  EXPECT_EQ(exporter.handle(r).body, "ok\n");
  r.path = "/";
  EXPECT_EQ(exporter.handle(r).body,
            "plumb exporter 1.2.3\n/metrics  Prometheus metrics (text format 0.0.4)\n"
            "/healthz  ok while the exporter runs\nsources: events\n");
  r.path = "/metricz";
  const HttpResponse missing = exporter.handle(r);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "not found: /metricz; the exporter serves /metrics and /healthz\n");
  r.method = "POST";
  r.path = "/metrics";
  const HttpResponse post = exporter.handle(r);
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.body, "method POST not allowed: use GET or HEAD\n");
  EXPECT_EQ(post.headers, (std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, HEAD"}}));
}

// A collect that blocks (a hung vendor tool) holds neither a scrape nor stop().
TEST(Exporter, ABlockedSourceDelaysNeitherAScrapeNorStop) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool inside = false;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<FakeSource>("npu-smi", 0.01, [gate] {
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->inside = true;
    gate->cv.notify_all();
    gate->cv.wait_for(lock, std::chrono::seconds(10), [&] { return gate->open; });
    return temperature(1);
  }));
  auto exporter = std::make_unique<Exporter>(std::move(sources), ExporterSettings{"1", {}, {}});
  exporter->start();
  {
    std::unique_lock<std::mutex> lock(gate->mu);
    ASSERT_TRUE(gate->cv.wait_for(lock, std::chrono::seconds(5), [&] { return gate->inside; }));
  }
  Clock::time_point t = Clock::now();
  const std::string text = exporter->metrics();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t).count(), 0.5);
  EXPECT_NE(text.find("plumb_exporter_source_up{source=\"npu-smi\"} 0\n"), std::string::npos);
  t = Clock::now();
  exporter.reset();  // stop() and destruction while the collect still blocks
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t).count(), 0.5);
  std::lock_guard<std::mutex> lock(gate->mu);
  gate->open = true;  // the left thread finishes on its own
  gate->cv.notify_all();
}

TEST(Exporter, ThreadsCollectAtTheirIntervalUntilStopped) {
  auto count = std::make_shared<std::atomic<int>>(0);
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<FakeSource>("events", 0.01, [count] {
    ++*count;
    return temperature(*count);
  }));
  Exporter exporter(std::move(sources), ExporterSettings{"1", {}, {}});
  exporter.start();
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
  while (*count < 3 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(*count, 3);
  const Clock::time_point t = Clock::now();
  exporter.stop();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t).count(), 0.5);
  const int after = *count;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(*count, after);
}

TEST(Exporter, PromtoolAcceptsAScrape) {
  World w;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(w.timed("nvidia-smi", [] { return temperature(45); }));
  sources.push_back(w.timed("probe", []() -> Families { throw Error("probe: exit 1"); }));
  Exporter exporter(std::move(sources), w.settings());
  exporter.collect_once();
  const std::string dir = test::temp_dir("exporter-promtool");
  test::write_file(dir + "/metrics.prom", exporter.metrics());
  const test::Run check = test::run_command("promtool check metrics < " + dir + "/metrics.prom");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out + check.err, "");
}

}  // namespace
}  // namespace plumb::exporter
