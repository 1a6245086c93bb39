// bench/exporter_render: how long `plumb exporter` takes to render /metrics for a large host.
//
// The set (issue 13's benchmark target): 64 devices × 6 device series (HBM used and total,
// temperature, power, utilisation, healthy; labels host, device, vendor, model), 500 operators ×
// 3 series (last, median, ratio; labels host, operator), 4 layers × 4 collectives busbw series,
// and the training step series. Timed, in the same run:
//   * render: the whole exposition from the families (render_exposition: escaping, numbers) —
//     what a source's collect pays once, and the upper bound of a scrape;
//   * scrape: Exporter::metrics() over the pre-rendered caches of three sources plus the
//     exporter's own series — what a scrape pays;
//   * the physical floor: memcpy of as many bytes as the exposition has.
// Each run times `--renders` renders and as many memcpys, alternating run by run; the figures are
// medians per render, and the ratio to the floor is the median of the per-run ratios (so that a
// run slowed down by the machine slows both sides). Target: render ≤ 1 ms.
//
//   build-release/bench/exporter_render [--runs N] [--renders N]
#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/stats.h"
#include "exporter/exporter.h"
#include "exporter/exposition.h"
#include "exporter/series.h"

namespace {

namespace ex = plumb::exporter;
namespace series = plumb::exporter::series;

constexpr int kDevices = 64;
constexpr int kOperators = 500;
constexpr double kTargetMs = 1.0;

ex::Families device_families() {
  const char* names[] = {series::kHbmUsed, series::kHbmTotal, series::kTemperature,
                         series::kPower, series::kUtilization, series::kHealthy};
  const double values[] = {61203283968.0, 85899345920.0, 47, 312.5, 0.93, 1};
  ex::Families out;
  for (int s = 0; s < 6; ++s) {
    ex::Family f{names[s], "Device series of the benchmark", "gauge", {}};
    for (int d = 0; d < kDevices; ++d) {
      f.samples.push_back({{{"host", "node-017.cluster.example"},
                            {"device", std::to_string(d)},
                            {"vendor", "nvidia"},
                            {"model", "NVIDIA H100 80GB HBM3"}},
                           values[s] + d * 0.001 * (s != 5),
                           ""});
    }
    out.push_back(std::move(f));
  }
  return out;
}

ex::Families event_families() {
  const char* names[] = {series::kOpSeconds, series::kOpMedian, series::kOpRatio};
  ex::Families out;
  for (int s = 0; s < 3; ++s) {
    ex::Family f{names[s], "Operator series of the benchmark", "gauge", {}};
    for (int o = 0; o < kOperators; ++o) {
      const double seconds = 1.25e-4 * (o + 1);
      f.samples.push_back({{{"host", "node-017.cluster.example"},
                            {"operator", fmt::format("aten::op_{}\"{}\"", o % 50, o)}},
                           s == 2 ? 1.0 + o * 1e-4 : seconds,
                           ""});
    }
    out.push_back(std::move(f));
  }
  out.push_back({series::kStep, "Last step", "gauge", {{{{"host", "n"}, {"rank", "0"}}, 12345, ""}}});
  out.push_back({series::kStepSeconds, "Last step time", "gauge",
                 {{{{"host", "n"}, {"rank", "0"}}, 1.734, ""}}});
  return out;
}

ex::Families comm_families() {
  ex::Family f{series::kBusbw, "Bus bandwidth of the benchmark", "gauge", {}};
  for (const char* layer : {"nvlink", "node", "rack", "spine"}) {
    for (const char* coll : {"allreduce", "allgather", "reducescatter", "alltoall"}) {
      f.samples.push_back(
          {{{"layer", layer}, {"collective", coll}, {"bytes", "134217728"}, {"source", "probe"}},
           1.8e11 / 3,
           ""});
    }
  }
  return {f};
}

class FixedSource : public ex::Source {
 public:
  FixedSource(std::string name, ex::Families families)
      : name_(std::move(name)), families_(std::move(families)) {}
  std::string name() const override { return name_; }
  double interval_seconds() const override { return 5; }
  ex::Families collect() override { return families_; }

 private:
  std::string name_;
  ex::Families families_;
};

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Wall time per call, and this thread's CPU time per call (what the code costs when other
// processes share the cores and preempt it).
template <class Fn>
double millis_per_call(int calls, Fn&& fn, double* cpu_ms = nullptr) {
  const double cpu_start = thread_cpu_ms();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) fn();
  if (cpu_ms != nullptr) *cpu_ms = (thread_cpu_ms() - cpu_start) / calls;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 9;
  int renders = 200;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::stoi(argv[++i]);
    if (std::strcmp(argv[i], "--renders") == 0) renders = std::stoi(argv[++i]);
  }
  ex::Families all = device_families();
  for (ex::Family& f : event_families()) all.push_back(std::move(f));
  for (ex::Family& f : comm_families()) all.push_back(std::move(f));
  std::vector<std::unique_ptr<ex::Source>> sources;
  sources.push_back(std::make_unique<FixedSource>("nvidia-smi", device_families()));
  sources.push_back(std::make_unique<FixedSource>("events", event_families()));
  sources.push_back(std::make_unique<FixedSource>("probe", comm_families()));
  ex::Exporter exporter(std::move(sources), {"bench", {}, {}});
  exporter.collect_once();

  std::size_t bytes = ex::render_exposition(all).size();
  std::size_t samples = 0;
  for (const ex::Family& f : all) samples += f.samples.size();
  const std::string source(bytes, 'x');
  std::string target(bytes, '\0');
  std::vector<double> render, render_cpu, scrape, floor, render_ratio, scrape_ratio;
  std::size_t sink = 0;
  for (int run = 0; run < runs; ++run) {
    double cpu = 0;
    render.push_back(
        millis_per_call(renders, [&] { sink += ex::render_exposition(all).size(); }, &cpu));
    render_cpu.push_back(cpu);
    floor.push_back(millis_per_call(renders, [&] {
      std::memcpy(target.data(), source.data(), bytes);
      sink += static_cast<unsigned char>(target[run % bytes]);
    }));
    scrape.push_back(millis_per_call(renders, [&] { sink += exporter.metrics().size(); }));
    render_ratio.push_back(render.back() / floor.back());
    scrape_ratio.push_back(scrape.back() / floor.back());
  }
  const double render_ms = plumb::percentile(render, 50);
  fmt::print(
      "# bench/exporter_render: {} devices × 6 series, {} operators × 3 series, 16 busbw series "
      "and 2 step series: {} samples, {:.1f} kB; {} renders per run, median of {} runs\n",
      kDevices, kOperators, samples, static_cast<double>(bytes) / 1e3, renders, runs);
  fmt::print("  memcpy of the bytes (floor)          {:9.4f} ms\n", plumb::percentile(floor, 50));
  fmt::print("  render from the families             {:9.4f} ms  ({:.1f}x the floor)\n", render_ms,
             plumb::percentile(render_ratio, 50));
  fmt::print("  render, this thread's CPU time       {:9.4f} ms\n", plumb::percentile(render_cpu, 50));
  fmt::print("  scrape of the pre-rendered caches    {:9.4f} ms  ({:.1f}x the floor)\n",
             plumb::percentile(scrape, 50), plumb::percentile(scrape_ratio, 50));
  fmt::print("exporter render {} samples: {:.3f} ms (median of {}), target {:.0f} ms: {} (ratio {:.3f})\n",
             samples, render_ms, runs, kTargetMs,
             render_ms <= kTargetMs ? "within target" : "ABOVE TARGET", render_ms / kTargetMs);
  return sink == 0 ? 1 : 0;
}
