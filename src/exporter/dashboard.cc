#include "exporter/dashboard.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"
#include "exporter/series.h"

namespace plumb::exporter {
namespace {

using nlohmann::json;

const json kDatasource = {{"type", "prometheus"}, {"uid", "${datasource}"}};

// The device selector every device panel uses: the host and device variables.
std::string devices(const char* metric) {
  return fmt::format(R"({}{{host=~"$host",device=~"$device"}})", metric);
}

std::string hosts(const char* metric) { return fmt::format(R"({}{{host=~"$host"}})", metric); }

struct Target {
  std::string expr;
  std::string legend;
};

struct Line {
  double value;
  const char* color;
};

// A time series panel draws lines; a heatmap one row per series (a host) over time, coloured by
// the value, so that 1,250 hosts of 8 devices stay one picture.
enum class Kind { kLines, kHeatmap };

struct Panel {
  const char* title;
  const char* unit;
  std::vector<Target> targets;
  std::vector<Line> lines;  // threshold lines drawn on the graph (the alerts' limits)
  const char* description;
  Kind kind = Kind::kLines;
};

json thresholds(const std::vector<Line>& lines) {
  json steps = json::array({{{"color", "green"}, {"value", nullptr}}});
  for (const Line& l : lines) steps.push_back({{"color", l.color}, {"value", l.value}});
  return {{"mode", "absolute"}, {"steps", steps}};
}

json targets_json(const Panel& p) {
  json targets = json::array();
  char ref = 'A';
  for (const Target& t : p.targets) {
    targets.push_back({{"datasource", kDatasource}, {"expr", t.expr},
                       {"legendFormat", t.legend}, {"refId", std::string(1, ref++)}});
  }
  return targets;
}

json lines_options(const Panel& p) {
  json custom = {{"drawStyle", "line"}, {"lineWidth", 1}, {"fillOpacity", 0},
                 {"showPoints", "never"},
                 {"thresholdsStyle", {{"mode", p.lines.empty() ? "off" : "line"}}}};
  return {{"fieldConfig", {{"defaults", {{"unit", p.unit}, {"custom", custom},
                                         {"thresholds", thresholds(p.lines)}}},
                           {"overrides", json::array()}}},
          {"options", {{"legend", {{"displayMode", "list"}, {"placement", "bottom"}}},
                       {"tooltip", {{"mode", "multi"}, {"sort", "desc"}}}}}};
}

// Grafana 11's heatmap with `calculate: false`: each series (one per host) is a row of cells.
json heatmap_options(const Panel& p) {
  return {{"fieldConfig", {{"defaults", {{"unit", p.unit},
                                         {"custom", {{"scaleDistribution", {{"type", "linear"}}}}}}},
                           {"overrides", json::array()}}},
          {"options", {{"calculate", false}, {"cellGap", 1}, {"rowsFrame", {{"layout", "auto"}}},
                       {"yAxis", {{"axisPlacement", "left"}}},
                       {"color", {{"mode", "scheme"}, {"scheme", "Oranges"}, {"steps", 64}}},
                       {"tooltip", {{"mode", "single"}, {"yHistogram", false}}},
                       {"legend", {{"show", true}}}, {"showValue", "never"}}}};
}

json panel_json(const Panel& p, int id, int x, int y) {
  const bool heatmap = p.kind == Kind::kHeatmap;
  json panel = {{"id", id}, {"type", heatmap ? "heatmap" : "timeseries"}, {"title", p.title},
                {"description", p.description}, {"datasource", kDatasource},
                {"gridPos", {{"h", 8}, {"w", 12}, {"x", x}, {"y", y}}},
                {"targets", targets_json(p)}};
  panel.update(heatmap ? heatmap_options(p) : lines_options(p));
  return panel;
}

struct Row {
  const char* title;
  std::vector<Panel> panels;
};

// The quantiles over devices (or ranks, or hosts) a distribution panel draws between min and max:
// the 1st and 99th percentile show the tails a few devices make at 10,000, the median the bulk.
constexpr double kLowQuantile = 0.01, kMedian = 0.5, kHighQuantile = 0.99;
// Quantiles of bandwidth: the slow tail is what matters (the slowest link paces a collective).
constexpr double kBandwidthLowQuantile = 0.05;
// How many devices, ranks or links a top-k or bottom-k panel names.
constexpr int kTail = 5;

std::string quantile(double q, const std::string& x) {
  return fmt::format("quantile({}, {})", q, x);
}

// min, p1, p50, p99, max of `x` over every series: five lines whatever the fleet's size.
std::vector<Target> spread(const std::string& x) {
  return {{"min(" + x + ")", "min"},
          {quantile(kLowQuantile, x), "p1"},
          {quantile(kMedian, x), "p50"},
          {quantile(kHighQuantile, x), "p99"},
          {"max(" + x + ")", "max"}};
}

Target top(const std::string& x, const std::string& legend) {
  return {fmt::format("topk({}, {})", kTail, x), legend};
}

Target bottom(const std::string& x, const std::string& legend) {
  return {fmt::format("bottomk({}, {})", kTail, x), legend};
}

// Each link's (host's) best busbw over message sizes, then the distribution over links.
std::string busbw_per_link() {
  return fmt::format("max without (bytes, source) ({})", series::kBusbw);
}

std::vector<Target> bandwidth_tail() {
  const std::string by = "by (layer, collective)";
  const std::string x = busbw_per_link();
  return {{fmt::format("min {} ({})", by, x), "{{layer}} {{collective}} min"},
          {fmt::format("quantile {} ({}, {})", by, kBandwidthLowQuantile, x),
           "{{layer}} {{collective}} p5"},
          {fmt::format("quantile {} ({}, {})", by, kMedian, x), "{{layer}} {{collective}} p50"}};
}

Panel per_host(const char* title, const char* unit, const char* aggregate, const std::string& x,
               const char* description) {
  return {title, unit, {{fmt::format("{} by (host) ({})", aggregate, x), "{{host}}"}}, {},
          description, Kind::kHeatmap};
}

Row devices_row(const AlertOptions& o) {
  namespace s = series;
  const std::string dev = "{{host}} {{device}}";
  const std::string hbm = devices(s::kRecHbmUsed) + " / " + devices(s::kRecHbmTotal);
  const std::string temp = devices(s::kRecTemperature), util = devices(s::kRecUtilization);
  return {"Devices",
          {{"HBM used / total over devices", "percentunit", spread(hbm), {{o.hbm_ratio, "red"}},
            "min, p1, p50, p99, max over the selected devices; PlumbHbmHigh fires above the line."},
           {"HBM used / total: fullest 5", "percentunit", {top(hbm, dev)}, {{o.hbm_ratio, "red"}},
            "The 5 devices nearest their HBM limit at each instant."},
           {"Temperature over devices", "celsius", spread(temp),
            {{o.temp_warn, "orange"}, {o.temp_crit, "red"}},
            "PlumbDeviceHot at the orange line, PlumbDeviceThrottling at the red one."},
           {"Temperature: hottest 5", "celsius", {top(temp, dev)},
            {{o.temp_warn, "orange"}, {o.temp_crit, "red"}}, "The 5 hottest devices."},
           per_host("Temperature per host (hottest device)", "celsius", "max", temp,
                    "One row per host, the hottest of its devices: a hot rack is a band."),
           per_host("Utilisation per host (least busy device)", "percentunit", "min", util,
                    "One row per host, its least busy device: an idle device stalls its peers."),
           {"Power over devices", "watt", spread(devices(s::kRecPower)), {},
            "Board or chip power draw, min to max over devices."},
           {"Utilisation over devices", "percentunit", spread(util), {},
            "dcgm-exporter GPU_UTIL, npu-exporter AI Core utilisation, as a ratio."},
           {"Utilisation: least busy 5", "percentunit", {bottom(util, dev)}, {},
            "The 5 least busy devices: the straggler or the idle one."},
           {"Unhealthy devices", "short",
            {{fmt::format("count({} == 0) or vector(0)", devices(s::kRecHealthy)), "unhealthy"}},
            {}, "How many devices report themselves unhealthy; PlumbDeviceUnhealthy names them."}}};
}

Row faults_row() {
  auto count = [](const char* metric, const char* legend) {
    return Target{fmt::format("count({} > 0) or vector(0)", devices(metric)), legend};
  };
  return {"Faults",
          {{"Devices with a fault", "short",
            {count(kRecXidCode, "Xid"), count(kRecEccUncorrectable, "uncorrectable ECC"),
             count(kRecRowRemapFailed, "row remap failed")},
            {}, "How many devices show each fault; the alerts name them."},
           {"Fault alerts firing", "short",
            {{R"(count by (alertname) (ALERTS{alertstate="firing",alertname=~"PlumbXidError|)"
              R"(PlumbEccUncorrectable|PlumbRowRemapFailed|PlumbNvlinkErrors|PlumbNicErrors|)"
              R"(PlumbLinkFlapping|PlumbDeviceUnhealthy"}))",
              "{{alertname}}"}},
            {}, "Firing alerts per kind: a rising line is a spreading fault."}}};
}

Row communication_row(const AlertOptions& o) {
  const double floor = gbps_to_bytes_per_second(o.bandwidth_min_gbps);
  return {"Communication",
          {{"Collective busbw per layer: slowest links", "Bps", bandwidth_tail(),
            {{floor, "red"}},
            "Each link's best busbw over message sizes, then min, p5 and p50 over links per "
            "layer and collective: the slowest link paces the collective. "
            "PlumbCollectiveBandwidthLow fires below the line."},
           {"Slowest 5 links", "Bps",
            {bottom(busbw_per_link(), "{{instance}} {{layer}} {{collective}}")}, {{floor, "red"}},
            "The 5 links with the lowest best busbw."}}};
}

Row training_row(const AlertOptions& o) {
  namespace s = series;
  const std::string rank = "{{host}} rank {{rank}}";
  const std::string step = hosts(s::kStepSeconds), ratio = hosts(s::kStepRatio);
  return {"Training",
          {{"Step time over ranks", "s", spread(step), {}, "The last step's seconds, min to max over ranks."},
           {"Step time: slowest 5 ranks", "s", {top(step, rank)}, {}, "The stragglers."},
           {"Tokens per second (all ranks)", "short",
            {{fmt::format("sum({})", hosts(s::kTokensPerSecond)), "all ranks"}}, {},
            "Training throughput, summed over ranks."},
           {"Tokens per second: slowest 5 ranks", "short",
            {bottom(hosts(s::kTokensPerSecond), rank)}, {}, "The ranks that hold the others back."},
           {"Step time / rolling median: worst 5", "short", {top(ratio, rank)},
            {{1 + o.step_jitter, "red"}}, "PlumbStepSlow fires above the line."},
           {"Operator jitter (top 10)", "short",
            {{fmt::format("topk(10, {})", hosts(s::kOpRatio)),
              "{{operator}} {{host}} rank {{rank}}"}},
            {{1 + o.op_jitter, "red"}},
            "The 10 operators furthest above their rolling median; PlumbOperatorSlow fires above "
            "the line."}}};
}

Row recovery_row(const AlertOptions& o) {
  return {"Recovery",
          {{"Restarts by plumb run (top 10)", "short",
            {{fmt::format("topk(10, round(increase({}[{}])))", series::kRunRestarts,
                          o.restart_window),
              "{{job_name}} {{instance}}"}},
            {{o.restarts_max + 0.5, "red"}},
            "Restarts within the restart window; PlumbRestartLoop fires above the line."}}};
}

std::vector<Row> rows(const AlertOptions& o) {
  return {devices_row(o), faults_row(), communication_row(o), training_row(o), recovery_row(o)};
}

json templating() {
  auto query = [](const char* name, const std::string& q) {
    return json{{"name", name}, {"label", name}, {"type", "query"}, {"datasource", kDatasource},
                {"definition", q}, {"query", {{"query", q}, {"refId", name}}},
                {"includeAll", true}, {"multi", true}, {"allValue", ".*"}, {"refresh", 2},
                {"sort", 3}, {"current", json::object()}};
  };
  return {{"list",
           {{{"name", "datasource"}, {"label", "Prometheus"}, {"type", "datasource"},
             {"query", "prometheus"}, {"current", json::object()}},
            query("host", fmt::format("label_values({}, host)", series::kRecHbmUsed)),
            query("device",
                  fmt::format(R"(label_values({}{{host=~"$host"}}, device))", series::kRecHbmUsed))}}};
}

}  // namespace

void validate_dashboard_options(const DashboardOptions& o) {
  std::vector<std::string> errors;
  try {
    validate_alert_options(o.alerts);
  } catch (const Error& e) {
    errors.push_back(e.what());
  }
  if (o.title.empty()) errors.push_back("--title '': expected a title");
  // Grafana's rule for a dashboard uid: up to 40 letters, digits, '-' and '_'.
  static const Regex kUid("[A-Za-z0-9_-]{1,40}");
  if (!kUid.match(o.uid)) {
    errors.push_back(fmt::format(
        "--uid '{}': expected 1 to 40 letters, digits, '-' or '_' (a Grafana dashboard uid)",
        o.uid));
  }
  if (!errors.empty()) throw Error(join(errors, "\n"));
}

json dashboard_json(const DashboardOptions& o) {
  json panels = json::array();
  int id = 1, y = 0;
  for (const Row& row : rows(o.alerts)) {
    panels.push_back({{"id", id++}, {"type", "row"}, {"title", row.title}, {"collapsed", false},
                      {"gridPos", {{"h", 1}, {"w", 24}, {"x", 0}, {"y", y++}}},
                      {"panels", json::array()}});
    for (size_t i = 0; i < row.panels.size(); ++i) {
      panels.push_back(panel_json(row.panels[i], id++, i % 2 == 0 ? 0 : 12, y));
      if (i % 2 == 1 || i + 1 == row.panels.size()) y += 8;
    }
  }
  return {{"title", o.title}, {"uid", o.uid}, {"schemaVersion", kGrafanaSchemaVersion},
          {"version", 1}, {"editable", true}, {"tags", {"plumb"}},
          {"time", {{"from", "now-6h"}, {"to", "now"}}}, {"refresh", "30s"},
          {"timezone", "browser"}, {"templating", templating()}, {"panels", panels},
          {"annotations", {{"list", json::array()}}}};
}

std::vector<std::string> dashboard_expressions(const json& dashboard) {
  std::vector<std::string> out;
  for (const json& panel : dashboard.at("panels")) {
    if (!panel.contains("targets")) continue;
    for (const json& t : panel.at("targets")) out.push_back(t.at("expr").get<std::string>());
  }
  return out;
}

}  // namespace plumb::exporter
