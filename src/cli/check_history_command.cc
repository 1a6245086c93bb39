// plumb check history: each node's last runs and the repeat offenders, the nodes that fail the
// same check in k of their last n runs (docs/check.md, "History").
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "baseline/store.h"
#include "check/history.h"
#include "cli/check_subcommands.h"
#include "cli/store_option.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/strings.h"

namespace plumb::cli {
namespace {

struct HistoryOptions {
  std::string db;
  std::string host;
  int k = check::kDefaultOffenderFailures;
  int n = check::kDefaultOffenderRuns;
  std::string json;
};

// Each host's statuses, newest first, in the order hosts first appear (newest pass first).
std::vector<std::pair<std::string, std::vector<std::string>>> by_host(
    const std::vector<baseline::CheckEntry>& passes) {
  std::vector<std::pair<std::string, std::vector<std::string>>> hosts;
  std::map<std::string, size_t> index;
  for (const baseline::CheckEntry& p : passes) {
    const auto [it, fresh] = index.emplace(p.host, hosts.size());
    if (fresh) hosts.push_back({p.host, {}});
    hosts[it->second].second.push_back(p.status);
  }
  return hosts;
}

nlohmann::json history_json(const std::vector<baseline::CheckEntry>& passes,
                            const std::vector<check::Offender>& offenders, const HistoryOptions& o) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [host, statuses] : by_host(passes)) nodes.push_back({{"host", host}, {"statuses", statuses}});
  nlohmann::json list = nlohmann::json::array();
  for (const check::Offender& off : offenders) {
    list.push_back({{"host", off.host}, {"check", off.check}, {"failed", off.failed}, {"runs", off.runs}});
  }
  return {{"schema", "plumb.check-history/1"}, {"k", o.k}, {"n", o.n}, {"nodes", nodes},
          {"repeat_offenders", list}};
}

void print_history(const std::vector<baseline::CheckEntry>& passes,
                   const std::vector<check::Offender>& offenders, const HistoryOptions& o) {
  fmt::print("{:<24} last {} node checks, newest first\n", "HOST", o.n);
  for (const auto& [host, statuses] : by_host(passes)) fmt::print("{:<24} {}\n", host, join(statuses, " "));
  if (offenders.empty()) {
    fmt::print("no repeat offender: no node failed the same check in {} of its last {} runs\n", o.k, o.n);
    return;
  }
  fmt::print("repeat offenders ({} of the last {} runs):\n", o.k, o.n);
  for (const check::Offender& off : offenders) fmt::print("  {}\n", check::describe(off));
}

int run_history(const HistoryOptions& o) {
  if (o.k > o.n) {
    throw Error(fmt::format("-k {} is more than -n {}: a check cannot fail in more runs than are "
                            "looked at", o.k, o.n));
  }
  std::optional<OutputFile> json;
  if (!o.json.empty()) json.emplace("--json", o.json);
  baseline::Store store(baseline::store_location(o.db),
                        baseline::StoreMode::kReadOnly);
  const std::vector<baseline::CheckEntry> passes = store.recent_checks(o.n, o.host, "node");
  if (passes.empty()) {
    throw Error(fmt::format("{} holds no node check{}: store them with plumb check node --store",
                            store.path(), o.host.empty() ? "" : " of " + o.host));
  }
  const std::vector<check::Offender> offenders = check::repeat_offenders(passes, o.k, o.n);
  if (json) {
    json->stream() << history_json(passes, offenders, o).dump(2) << "\n";
    json->commit();
  }
  if (o.json != "-") print_history(passes, offenders, o);
  return offenders.empty() ? 0 : 1;
}

}  // namespace

void setup_check_history(CLI::App& check, std::function<int()>& selected) {
  auto o = std::make_shared<HistoryOptions>();
  CLI::App* sub = check.add_subcommand(
      "history", "Each node's last node checks from the store, and the repeat offenders: nodes "
                 "failing the same check in k of their last n runs (exit 1 when there is one)");
  sub->add_option("--db", o->db, kStoreOptionHelp);
  sub->add_option("--host", o->host, "Only this node");
  sub->add_option("-k", o->k, "Failures that make a repeat offender")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("-n", o->n, "Runs looked at per node, newest first")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--json", o->json, "Write plumb.check-history/1 here (- for standard output)");
  sub->callback([o, &selected] { selected = [o] { return run_history(*o); }; });
}

}  // namespace plumb::cli
