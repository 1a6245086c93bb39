#include "check/links_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cctype>
#include <set>

#include "common/strings.h"
#include "common/units.h"

namespace plumb::check {
namespace {

std::string upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string host_of(const LinksReport& r, int rank) {
  return rank >= 0 && static_cast<size_t>(rank) < r.hosts.size()
             ? r.hosts[static_cast<size_t>(rank)]
             : "";
}

nlohmann::json layer_json(const LayerStats& l) {
  return {{"name", l.name},
          {"pairs", l.pairs},
          {"median_busbw_gbps", l.median_busbw_gbps},
          {"median_p99_us", l.median_p99_us},
          {"mad_log_ratio", l.mad_log_ratio}};
}

nlohmann::json pair_json(const LinksReport& r, const PairResult& p) {
  return {{"ranks", {p.ranks.a, p.ranks.b}},
          {"hosts", {host_of(r, p.ranks.a), host_of(r, p.ranks.b)}},
          {"layer", p.layer},
          {"busbw_gbps", p.busbw_gbps},
          {"busbw_repeats_gbps", p.busbw_repeats},
          {"p99_us", p.p99_us},
          {"ratio", p.ratio},
          {"p99_ratio", p.p99_ratio},
          {"slow", p.slow}};
}

nlohmann::json rounds_json(const LinksReport& r) {
  nlohmann::json rounds = nlohmann::json::array();
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const PairResult& p : r.analysis.pairs) {
      if (p.round == static_cast<int>(i)) pairs.push_back(pair_json(r, p));
    }
    rounds.push_back({{"round", i}, {"name", r.rounds[i].name}, {"pairs", std::move(pairs)}});
  }
  return rounds;
}

nlohmann::json suspect_json(const LinksReport& r, const Suspect& s) {
  return {{"rank", s.rank},         {"host", host_of(r, s.rank)}, {"kind", s.kind},
          {"layer", s.layer},       {"partners", s.partners},     {"ratio", s.ratio},
          {"p99_ratio", s.p99_ratio}};
}

std::string partner_list(const LinksReport& r, const std::vector<int>& partners) {
  std::vector<std::string> names;
  for (const int p : partners) names.push_back(fmt::format("{} ({})", p, host_of(r, p)));
  return join(names, ", ");
}

std::string suspect_line(const LinksReport& r, const Suspect& s) {
  if (s.kind == "node") {
    return fmt::format("rank {} ({}): node, slow with partners {}, busbw {:.2f} of the "
                       "median, p99 {:.1f}× the median; layer {}",
                       s.rank, host_of(r, s.rank), partner_list(r, s.partners), s.ratio,
                       s.p99_ratio, s.layer);
  }
  return fmt::format("rank {} ({}) ↔ rank {}: link, slow only together, busbw {:.2f} of the "
                     "median, p99 {:.1f}× the median; layer {}",
                     s.rank, host_of(r, s.rank), partner_list(r, s.partners), s.ratio,
                     s.p99_ratio, s.layer);
}

std::string verdict_line(const LinksReport& r) {
  const Status status = links_status(r.analysis);
  if (status == Status::kOk) {
    return fmt::format("CHECK LINKS OK - {} pairs in {} rounds, no suspect",
                       r.analysis.pairs.size(), r.rounds.size());
  }
  std::vector<std::string> nodes;
  int links = 0;
  for (const Suspect& s : r.analysis.suspects) {
    if (s.kind == "node") nodes.push_back(fmt::format("rank {} ({})", s.rank, host_of(r, s.rank)));
    links += s.kind == "link" ? 1 : 0;
  }
  std::string what = nodes.empty() ? "" : fmt::format("{} node suspect(s): {}", nodes.size(), join(nodes, ", "));
  if (links > 0) what += fmt::format("{}{} link suspect(s)", what.empty() ? "" : "; ", links);
  return fmt::format("CHECK LINKS {} - {}", upper(status_name(status)), what);
}

}  // namespace

Status links_status(const LinksAnalysis& analysis) {
  Status status = Status::kOk;
  for (const Suspect& s : analysis.suspects) {
    status = worse(status, s.kind == "node" ? Status::kCritical : Status::kWarning);
  }
  return status;
}

nlohmann::json links_json(const LinksReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerStats& l : r.analysis.layers) layers.push_back(layer_json(l));
  nlohmann::json suspects = nlohmann::json::array();
  for (const Suspect& s : r.analysis.suspects) suspects.push_back(suspect_json(r, s));
  return {{"schema", kCheckLinksSchema},
          {"created", r.created},
          {"backend", r.backend},
          {"ranks", r.hosts.size()},
          {"hosts", r.hosts},
          {"status", status_name(links_status(r.analysis))},
          {"pattern", r.pattern},
          {"settings",
           {{"bytes", r.measure.bytes},
            {"iters", r.measure.iters},
            {"warmup", r.measure.warmup},
            {"repeat", r.measure.repeat},
            {"threshold", r.thresholds.busbw_ratio},
            {"mad_factor", r.thresholds.mad_factor},
            {"p99_threshold", r.thresholds.p99_ratio}}},
          {"layers", std::move(layers)},
          {"suspects", std::move(suspects)},
          {"rounds", rounds_json(r)}};
}

void print_links_console(const LinksReport& r, std::ostream& out) {
  const std::set<std::string> hosts(r.hosts.begin(), r.hosts.end());
  fmt::print(out, "plumb check links: {} ranks on {} host(s), pattern {}: {} rounds, {} pairs, "
                  "{} sendrecv × {} iterations, median of {}\n",
             r.hosts.size(), hosts.size(), r.pattern, r.rounds.size(), r.analysis.pairs.size(),
             format_bytes(r.measure.bytes), r.measure.iters, r.measure.repeat);
  for (const LayerStats& l : r.analysis.layers) {
    fmt::print(out, "  layer {:<6} {:>5} pairs   median busbw {:.3f} GB/s   median p99 {:.1f} us   "
                    "MAD of ln(ratio) {:.3f}\n",
               l.name, l.pairs, l.median_busbw_gbps, l.median_p99_us, l.mad_log_ratio);
  }
  for (const Suspect& s : r.analysis.suspects) fmt::print(out, "  SUSPECT {}\n", suspect_line(r, s));
  fmt::print(out, "{}\n", verdict_line(r));
}

}  // namespace plumb::check
