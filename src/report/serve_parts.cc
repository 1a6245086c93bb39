#include "report/serve_parts.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace plumb::report {
namespace {

using nlohmann::json;

bool present(const json& run, const char* key) {
  return run.contains(key) && !run[key].is_null();
}

std::string optional_text(const json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

std::vector<std::pair<double, double>> points_from(const JsonFields& f, const json& o,
                                                   const std::string& path, const char* key) {
  std::vector<std::pair<double, double>> points;
  const json& list = f.array(o, path, key);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", JsonFields::at(path, key), i);
    if (!list[i].is_array() || list[i].size() != 2 || !list[i][0].is_number()) {
      f.fail(at, "expected [seconds, value], got " + JsonFields::shown(list[i]));
    }
    // A series' NaN and ±Inf are written as strings ("NaN", "+Inf"): kept as NaN here.
    const json& v = list[i][1];
    points.emplace_back(list[i][0].get<double>(),
                        v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  return points;
}

serve::EnergyReport energy_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::EnergyReport e;
  e.source = f.text(o, path, "source");
  e.cards = static_cast<int>(f.integer(o, path, "cards", 0, 1'000'000));
  e.joules = f.number(o, path, "joules");
  e.mean_watts = f.number(o, path, "mean_watts");
  e.output_tokens_per_joule = f.number(o, path, "output_tokens_per_joule");
  e.watts = points_from(f, o, path, "watts");
  e.problem = optional_text(o, "problem");
  return e;
}

serve::CostReport cost_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::CostReport c;
  c.price_per_card_hour = f.number(o, path, "price_per_card_hour");
  c.price_source = f.text(o, path, "price_source");
  c.cards = static_cast<int>(f.integer(o, path, "cards", 1, 1'000'000));
  c.run_hours = f.number(o, path, "run_hours");
  c.output_tokens = static_cast<std::int64_t>(f.whole(o, path, "output_tokens"));
  c.cost_per_million_output_tokens = f.number_or_null(o, path, "cost_per_million_output_tokens");
  return c;
}

serve::ServerScrape server_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::ServerScrape s;
  s.url = f.text(o, path, "url");
  s.problem = optional_text(o, "problem");
  const json& series = f.array(o, path, "series");
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string at = fmt::format("{}.series[{}]", path, i);
    serve::ServerSeries one;
    one.name = f.text(series[i], at, "name");
    if (series[i].contains("labels") && series[i]["labels"].is_object()) {
      for (const auto& [k, v] : series[i]["labels"].items()) {
        if (v.is_string()) one.labels[k] = v.get<std::string>();
      }
    }
    one.points = points_from(f, series[i], at, "points");
    s.series.push_back(std::move(one));
  }
  return s;
}

}  // namespace

void serve_parts_from(const JsonFields& f, const json& run, const std::string& path,
                      serve::ServeRun& out) {
  if (present(run, "server")) out.server = server_from(f, run["server"], JsonFields::at(path, "server"));
  if (present(run, "energy")) out.energy = energy_from(f, run["energy"], JsonFields::at(path, "energy"));
  if (present(run, "cost")) out.cost = cost_from(f, run["cost"], JsonFields::at(path, "cost"));
}

void serve_parts_json(const serve::ServeRun& run, json& out) {
  if (run.server) out["server"] = serve::server_scrape_json(*run.server);
  if (run.energy) out["energy"] = serve::energy_json(*run.energy);
  if (run.cost) out["cost"] = serve::cost_json(*run.cost);
}

std::vector<std::string> serve_part_lines(const serve::ServeRun& run) {
  std::vector<std::string> lines;
  if (run.energy) {
    const serve::EnergyReport& e = *run.energy;
    lines.push_back(e.problem.empty()
                        ? fmt::format("Energy: {:.1f} J, mean {:.1f} W ({}, {} card{}): {:.3g} "
                                      "output tokens/J",
                                      e.joules, e.mean_watts, e.source, e.cards,
                                      e.cards == 1 ? "" : "s", e.output_tokens_per_joule)
                        : fmt::format("Energy: not measured ({})", e.problem));
  }
  if (run.cost) {
    const serve::CostReport& c = *run.cost;
    lines.push_back(std::isfinite(c.cost_per_million_output_tokens)
                        ? fmt::format("Cost: {:.4g} per million output tokens ({} {:g} per "
                                      "card-hour, {} card{})",
                                      c.cost_per_million_output_tokens, c.price_source,
                                      c.price_per_card_hour, c.cards, c.cards == 1 ? "" : "s")
                        : std::string("Cost: no output token, no price per token"));
  }
  if (run.server) {
    const serve::ServerScrape& s = *run.server;
    std::string line = fmt::format("Server /metrics: {} series from {}", s.series.size(), s.url);
    if (!s.problem.empty()) line += "; " + s.problem;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace plumb::report
