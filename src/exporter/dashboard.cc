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

struct Panel {
  const char* title;
  const char* unit;
  std::vector<Target> targets;
  std::vector<Line> lines;  // threshold lines drawn on the graph (the alerts' limits)
  const char* description;
};

json thresholds(const std::vector<Line>& lines) {
  json steps = json::array({{{"color", "green"}, {"value", nullptr}}});
  for (const Line& l : lines) steps.push_back({{"color", l.color}, {"value", l.value}});
  return {{"mode", "absolute"}, {"steps", steps}};
}

json panel_json(const Panel& p, int id, int x, int y) {
  json targets = json::array();
  char ref = 'A';
  for (const Target& t : p.targets) {
    targets.push_back({{"datasource", kDatasource}, {"expr", t.expr},
                       {"legendFormat", t.legend}, {"refId", std::string(1, ref++)}});
  }
  json custom = {{"drawStyle", "line"}, {"lineWidth", 1}, {"fillOpacity", 0},
                 {"showPoints", "never"},
                 {"thresholdsStyle", {{"mode", p.lines.empty() ? "off" : "line"}}}};
  return {{"id", id}, {"type", "timeseries"}, {"title", p.title},
          {"description", p.description}, {"datasource", kDatasource},
          {"gridPos", {{"h", 8}, {"w", 12}, {"x", x}, {"y", y}}},
          {"fieldConfig", {{"defaults", {{"unit", p.unit}, {"custom", custom},
                                         {"thresholds", thresholds(p.lines)}}},
                           {"overrides", json::array()}}},
          {"options", {{"legend", {{"displayMode", "list"}, {"placement", "bottom"}}},
                       {"tooltip", {{"mode", "multi"}, {"sort", "desc"}}}}},
          {"targets", targets}};
}

struct Row {
  const char* title;
  std::vector<Panel> panels;
};

std::vector<Row> rows(const AlertOptions& o) {
  namespace s = series;
  const std::string dev = "{{host}} {{device}}";
  return {
      {"Devices",
       {{"HBM used / total", "percentunit",
         {{devices(s::kRecHbmUsed) + " / " + devices(s::kRecHbmTotal), dev}},
         {{o.hbm_ratio, "red"}}, "PlumbHbmHigh fires above the line."},
        {"Temperature", "celsius", {{devices(s::kRecTemperature), dev}},
         {{o.temp_warn, "orange"}, {o.temp_crit, "red"}},
         "PlumbDeviceHot at the orange line, PlumbDeviceThrottling at the red one."},
        {"Power", "watt", {{devices(s::kRecPower), dev}}, {}, "Board or chip power draw."},
        {"Utilisation", "percentunit", {{devices(s::kRecUtilization), dev}}, {},
         "dcgm-exporter GPU_UTIL, npu-exporter AI Core utilisation, as a ratio."},
        {"Healthy (1) / unhealthy (0)", "short", {{devices(s::kRecHealthy), dev}}, {},
         "PlumbDeviceUnhealthy fires at 0."}}},
      {"Communication",
       {{"Collective busbw per layer", "Bps",
         {{fmt::format("max by (layer, collective) ({})", s::kBusbw),
           "{{layer}} {{collective}}"}},
         {{gbps_to_bytes_per_second(o.bandwidth_min_gbps), "red"}},
         "The best busbw per layer and collective; PlumbCollectiveBandwidthLow fires below the "
         "line."}}},
      {"Training",
       {{"Step time", "s", {{hosts(s::kStepSeconds), "{{host}} rank {{rank}}"}}, {},
         "The last step's seconds per rank."},
        {"Tokens per second", "short", {{hosts(s::kTokensPerSecond), "{{host}} rank {{rank}}"}},
         {}, "Training throughput per rank."},
        {"Step time / rolling median", "short",
         {{hosts(s::kStepRatio), "{{host}} rank {{rank}}"}}, {{1 + o.step_jitter, "red"}},
         "PlumbStepSlow fires above the line."},
        {"Operator jitter (top 10)", "short",
         {{fmt::format("topk(10, {})", hosts(s::kOpRatio)), "{{operator}} {{host}} rank {{rank}}"}},
         {{1 + o.op_jitter, "red"}},
         "The 10 operators furthest above their rolling median; PlumbOperatorSlow fires above "
         "the line."}}},
      {"Recovery",
       {{"Restarts by plumb run", "short",
         {{fmt::format("round(increase({}[{}]))", s::kRunRestarts, o.restart_window),
           "{{job_name}} {{instance}}"}},
         {{o.restarts_max + 0.5, "red"}},
         "Restarts within the restart window; PlumbRestartLoop fires above the line."}}},
  };
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
