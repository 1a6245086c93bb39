#include "exporter/exporter.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/steady_time.h"
#include "common/strings.h"
#include "exporter/exposition.h"
#include "exporter/series.h"

namespace plumb::exporter {

// What a source's thread shares with the exporter; a thread left inside a hung collect by stop()
// keeps it alive through its shared_ptr.
struct Exporter::Shared {
  std::function<double()> clock;
  std::function<void(const std::string&)> log;
};

struct Exporter::Slot {
  std::unique_ptr<Source> source;
  std::string name;
  std::thread thread;
  std::mutex mu;  // guards what follows; never held during a collect
  std::condition_variable wake;
  std::shared_ptr<const std::vector<RenderedFamily>> rendered;  // the last good collect
  bool up = false;
  bool ever_ok = false;
  double last_ok = 0;            // clock() at the end of the last good collect
  double collect_seconds = NAN;  // the last collect's duration, good or not
  unsigned long long errors = 0;
  std::string logged;            // the last error message logged ("" since a good collect)
  bool busy = false;             // inside collect()
  bool stopping = false;
};

namespace {

struct Snapshot {
  std::string name;
  std::shared_ptr<const std::vector<RenderedFamily>> rendered;
  bool up = false;
  bool ever_ok = false;
  double last_ok = 0;
  double collect_seconds = NAN;
  unsigned long long errors = 0;
};

Labels source_label(const std::string& name) { return {{"source", name}}; }

// The exporter's own series about each source, the build and the scrapes.
Families own_families(const std::vector<Snapshot>& snaps, double now, const std::string& version,
                      unsigned long long scrapes) {
  Family up{series::kSourceUp, "1 when the source's last collect succeeded, 0 when it failed",
            "gauge", {}};
  Family age{series::kSourceAge,
             "Seconds since the source's last good collect: the age of the values served",
             "gauge", {}};
  Family errors{series::kSourceErrors, "Collects of the source that failed", "counter", {}};
  Family took{series::kSourceSeconds, "Seconds the source's last collect took", "gauge", {}};
  for (const Snapshot& s : snaps) {
    up.samples.push_back({source_label(s.name), s.up ? 1.0 : 0.0, ""});
    if (s.ever_ok) age.samples.push_back({source_label(s.name), now - s.last_ok, ""});
    errors.samples.push_back({source_label(s.name), static_cast<double>(s.errors), ""});
    if (!std::isnan(s.collect_seconds)) {
      took.samples.push_back({source_label(s.name), s.collect_seconds, ""});
    }
  }
  Family build{series::kBuildInfo, "The plumb version serving these metrics; always 1", "gauge",
               {{{{"version", version}}, 1, ""}}};
  Family scraped{series::kScrapes, "Answers to /metrics since the exporter started", "counter",
                 {{{}, static_cast<double>(scrapes), ""}}};
  return {std::move(up), std::move(age), std::move(errors), std::move(took), std::move(build),
          std::move(scraped)};
}

std::string failure_text(const std::exception& e, const std::string& source) {
  if (dynamic_cast<const Error*>(&e) != nullptr) return e.what();
  return fmt::format("{}: unexpected error: {}", source, e.what());
}

// What collect_into logs of a collect: the first failure, each change of its message, and the
// return to good values; "" when nothing. Read under the slot's lock.
std::string collect_message(const Exporter::Slot& slot, bool ok, const std::string& failure,
                            double end) {
  if (ok) {
    return slot.logged.empty() ? "" : fmt::format("plumb exporter: {}: collecting again", slot.name);
  }
  if (failure == slot.logged) return "";
  return slot.ever_ok ? fmt::format("plumb exporter: {}; serving its values from {:.0f} s ago",
                                    failure, end - slot.last_ok)
                      : fmt::format("plumb exporter: {}; no values from it yet", failure);
}

// One collect of `slot`'s source; the result replaces the cache only when it succeeded. The
// message goes to the log before the state a scrape shows changes, so that whoever sees
// plumb_exporter_source_up change finds its reason in the log already.
bool collect_into(Exporter::Slot& slot, const Exporter::Shared& shared) {
  const double start = shared.clock();
  std::shared_ptr<const std::vector<RenderedFamily>> rendered;
  std::string failure;
  try {
    rendered = std::make_shared<const std::vector<RenderedFamily>>(
        render_families(slot.source->collect()));
  } catch (const std::exception& e) {
    failure = failure_text(e, slot.name);
  }
  const double end = shared.clock();
  const bool ok = rendered != nullptr;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    message = collect_message(slot, ok, failure, end);
  }
  if (!message.empty()) shared.log(message);
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.busy = false;
  slot.collect_seconds = end - start;
  slot.up = ok;
  if (ok) {
    slot.rendered = std::move(rendered);
    slot.ever_ok = true;
    slot.last_ok = end;
    slot.logged.clear();
  } else {
    ++slot.errors;
    slot.logged = failure;
  }
  return slot.up;
}

// A source's thread: collect, then wait until its next start (or stop), start to start.
void run_slot(std::shared_ptr<Exporter::Slot> slot, std::shared_ptr<Exporter::Shared> shared) {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.01, slot->source->interval_seconds())));
  for (auto next = std::chrono::steady_clock::now();; ) {
    {
      std::unique_lock<std::mutex> lock(slot->mu);
      slot->wake.wait_until(lock, next, [&] { return slot->stopping; });
      if (slot->stopping) return;
      slot->busy = true;
    }
    next += interval;
    collect_into(*slot, *shared);
    if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now();
  }
}

}  // namespace

Exporter::Exporter(std::vector<std::unique_ptr<Source>> sources, ExporterSettings settings)
    : shared_(std::make_shared<Shared>()) {
  shared_->clock = settings.clock ? std::move(settings.clock) : steady_seconds;
  // A source's message may quote a tool's output: made safe for a terminal.
  shared_->log = settings.log ? std::move(settings.log) : [](const std::string& line) {
    fmt::print(stderr, "{}\n", terminal_safe(line));
  };
  version_ = std::move(settings.version);
  for (auto& source : sources) {
    auto slot = std::make_shared<Slot>();
    slot->name = source->name();
    slot->source = std::move(source);
    slots_.push_back(std::move(slot));
  }
}

Exporter::~Exporter() { stop(); }

std::vector<std::string> Exporter::source_names() const {
  std::vector<std::string> names;
  for (const auto& slot : slots_) names.push_back(slot->name);
  return names;
}

bool Exporter::collect_once() {
  bool ok = true;
  for (const auto& slot : slots_) ok = collect_into(*slot, *shared_) && ok;
  return ok;
}

void Exporter::start() {
  for (const auto& slot : slots_) {
    if (slot->thread.joinable()) continue;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->stopping = false;
    }
    slot->thread = std::thread(run_slot, slot, shared_);
  }
}

void Exporter::stop() {
  for (const auto& slot : slots_) {
    bool busy = false;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->stopping = true;
      busy = slot->busy;
    }
    slot->wake.notify_all();
    if (!slot->thread.joinable()) continue;
    if (busy) {
      slot->thread.detach();  // it returns after its collect, seeing `stopping`
    } else {
      slot->thread.join();
    }
  }
}

std::string Exporter::metrics() {
  const unsigned long long scrapes = ++scrapes_;
  std::vector<Snapshot> snaps;
  snaps.reserve(slots_.size());
  for (const auto& slot : slots_) {
    std::lock_guard<std::mutex> lock(slot->mu);
    snaps.push_back({slot->name, slot->rendered, slot->up, slot->ever_ok, slot->last_ok,
                     slot->collect_seconds, slot->errors});
  }
  const std::vector<RenderedFamily> own =
      render_families(own_families(snaps, shared_->clock(), version_, scrapes));
  std::vector<const std::vector<RenderedFamily>*> parts;
  for (const Snapshot& s : snaps) {
    if (s.rendered) parts.push_back(s.rendered.get());
  }
  parts.push_back(&own);
  std::string out;
  append_exposition(out, parts);
  return out;
}

HttpResponse Exporter::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path != "/metrics" && path != "/healthz" && path != "/") {
    return {404, "text/plain; charset=utf-8",
            fmt::format("not found: {}; the exporter serves /metrics and /healthz\n", path), {}};
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return {405, "text/plain; charset=utf-8",
            fmt::format("method {} not allowed: use GET or HEAD\n", request.method),
            {{"Allow", "GET, HEAD"}}};
  }
  if (path == "/metrics") return {200, kExpositionContentType, metrics(), {}};
  if (path == "/healthz") return {200, "text/plain; charset=utf-8", "ok\n", {}};
  std::string names;
  for (const std::string& n : source_names()) names += (names.empty() ? "" : ", ") + n;
  return {200, "text/plain; charset=utf-8",
          fmt::format("plumb exporter {}\n/metrics  Prometheus metrics (text format 0.0.4)\n"
                      "/healthz  ok while the exporter runs\nsources: {}\n",
                      version_, names.empty() ? "none" : names),
          {}};
}

}  // namespace plumb::exporter
