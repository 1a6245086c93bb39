// The server's own Prometheus /metrics (vLLM, TGI, Triton, MindIE), scraped before, during and
// after a run and kept beside the client's numbers (docs/serve.md, "Server side").
#pragma once

#include "serve/prom_text.h"
#include "serve/request.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::serve {

// One series over the run: (seconds from the run's start, value); before is at t < 0, after at
// t > the run's duration.
struct ServerSeries {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> points;
};

struct ServerScrape {
  std::string url;
  std::vector<ServerSeries> series;
  std::string problem;  // one line when a scrape failed ("GET http://h:8000/metrics: HTTP 404")
  int scrapes = 0;      // attempted
  int failed = 0;
};

nlohmann::json server_scrape_json(const ServerScrape& scrape);

// Which series a serving engine exposes, by name: a table of (engine, prefix). MindIE's names
// carry no prefix of their own, so its entries are the names' own beginnings.
struct ServingSeriesPrefix {
  std::string_view engine;
  std::string_view prefix;
};
const std::vector<ServingSeriesPrefix>& serving_series_prefixes();
// The engine whose series `name` is ("vLLM", "MindIE", ...), or "" when it is none of them.
// prometheus_client's `_created` series (a creation time, not a measurement) are not kept.
std::string_view serving_engine_of(std::string_view name);

// Adds the serving series of one parsed scrape as points at `t_s`.
void add_scrape_points(ServerScrape& scrape, const PromText& text, double t_s);

// GETs `url` and returns its body; throws plumb::Error "GET URL: <reason>" (refused, timed out,
// "HTTP 404"). libcurl, opened with dlopen (exporter/curl_library.h).
using MetricsGetter = std::function<std::string(const std::string& url, double timeout_s)>;
std::string http_get_text(const std::string& url, double timeout_s);

// Scrapes `url` once before the run, every `interval_s` during it on a thread of its own, and
// once after. A failed scrape is counted and its reason kept in `problem`: never a failed run.
class ServerScraper {
 public:
  ServerScraper(std::string url, double interval_s, MetricsGetter get = http_get_text);
  ~ServerScraper();
  ServerScraper(const ServerScraper&) = delete;
  ServerScraper& operator=(const ServerScraper&) = delete;

  // Scrapes once, before the run (its points fall at t < 0).
  void before();
  // Starts the thread; `origin_ns` (CLOCK_MONOTONIC) is the run's start, the zero of every
  // point's time.
  void start(Nanos origin_ns);
  // Stops the thread, scrapes once more ("after") and returns what was kept. `origin_ns`, when
  // given, replaces start()'s (run_load's RunOutcome::start_ns, known only after the run).
  ServerScrape finish(Nanos origin_ns = kNoTime);

 private:
  void scrape_once();
  std::string url_;
  double interval_s_;
  MetricsGetter get_;
  Nanos origin_ns_ = 0;  // points are kept in absolute ns until finish()
  ServerScrape scrape_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace plumb::serve
