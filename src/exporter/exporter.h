// The core of `plumb exporter`: every source collects on a thread of its own at its interval and
// leaves its last good result, rendered once, in a cache; a scrape concatenates the caches and adds
// the exporter's own series (series.h: up, age, errors, collect time per source; build info;
// scrapes). A scrape never waits for a collect: the lock of a source guards only the swap of its
// cached text and counters. A failing source keeps its previous values (its age grows, up is 0,
// errors count) and is logged once per change of message.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exporter/http_server.h"
#include "exporter/source.h"

namespace plumb::exporter {

struct ExporterSettings {
  std::string version;  // plumb_exporter_build_info{version}
  // Seconds on a monotonic clock (ages, collect times); steady_clock when empty. Tests inject one.
  std::function<double()> clock;
  // Where the one-line messages go ("plumb exporter: npu-smi: ...; serving its values from 12 s
  // ago"); a line on stderr when empty.
  std::function<void(const std::string&)> log;
};

class Exporter {
 public:
  Exporter(std::vector<std::unique_ptr<Source>> sources, ExporterSettings settings);
  ~Exporter();  // stop()
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  std::vector<std::string> source_names() const;

  // Every source once, one after the other, on this thread (`plumb exporter --once`, tests).
  // False when one failed.
  bool collect_once();
  // A thread per source: collects at once, then every interval_seconds(), start to start.
  void start();
  // Prompt: ends the waits between collects and joins those threads; a thread inside a collect
  // that has not returned is left to finish on its own (it owns what it touches), so that a
  // hung vendor tool cannot hold up the exit.
  void stop();

  // The /metrics text: every source's cached families, then the exporter's own series.
  std::string metrics();
  // GET/HEAD /metrics, /healthz ("ok"), / (an index); 404 for another path, 405 for another method.
  HttpResponse handle(const HttpRequest& request);

  // Inside exporter.cc: a source with its cache and thread; what the threads share.
  struct Slot;
  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
  std::string version_;
  std::vector<std::shared_ptr<Slot>> slots_;
  std::atomic<unsigned long long> scrapes_{0};
};

}  // namespace plumb::exporter
