#include "cli/store_commands.h"
#include "cli/store_option.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <vector>

#include "baseline/record_kind.h"
#include "baseline/step_diff.h"
#include "baseline/store.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/baseline_reporter.h"
#include "report/check_reporter.h"
#include "report/recovery_reporter.h"
#include "report/serve_reporter.h"
#include "report/set_reporter.h"
#include "report/step_diff_reporter.h"
#include "supervise/recovery_json.h"

namespace plumb::cli {
namespace {

void add_db(CLI::App& app, StoreOptions& o) {
  app.add_option("--db", o.db, kStoreOptionHelp);
}

void add_id(CLI::App& app, StoreOptions& o) {
  app.add_option("id", o.id, "A baseline id, or latest")->capture_default_str();
}

std::string store_path(const StoreOptions& o) {
  return baseline::store_location(o.db);
}

// list, show and export only read: nothing is created or changed, not even on a mistyped path.
baseline::Store open_store(const StoreOptions& o) {
  return baseline::Store(store_path(o), baseline::StoreMode::kReadOnly);
}

std::string name_of(const baseline::Record& r) { return fmt::format("baseline {}", r.id); }

void show_comm(const baseline::Record& r) { report::print_baseline_summary(r, std::cout); }

void show_step(const baseline::Record& r) {
  report::print_step_record(r, baseline::summarize_step(r.step, name_of(r)), std::cout);
}

void show_recovery(const baseline::Record& r) {
  report::print_recovery_record(r, supervise::recovery_from_json(r.recovery, name_of(r)),
                                std::cout);
}

void show_set(const baseline::Record& r) { report::print_set(r, std::cout); }

void show_serve(const baseline::Record& r) {
  report::print_record_header(r, std::cout);
  report::print_serve_console(std::cout, report::serve_from_json(r.serve, name_of(r)));
}

// How plumb show prints each kind of record (baseline/record_kind.h).
struct Shower {
  baseline::RecordKind kind;
  void (*show)(const baseline::Record&);
};
constexpr Shower kShowers[] = {
    {baseline::RecordKind::kComm, show_comm},
    {baseline::RecordKind::kStep, show_step},
    {baseline::RecordKind::kRecovery, show_recovery},
    {baseline::RecordKind::kSet, show_set},
    {baseline::RecordKind::kServe, show_serve},
};

}  // namespace

void setup_list(CLI::App& app, StoreOptions& o) {
  add_db(app, o);
  app.add_option("-n,--limit", o.limit, "How many, newest first")->capture_default_str()
      ->check(CLI::PositiveNumber);
}

void setup_show(CLI::App& app, StoreOptions& o) {
  add_id(app, o);
  add_db(app, o);
}

void setup_export(CLI::App& app, StoreOptions& o) {
  add_id(app, o);
  add_db(app, o);
  app.add_option("-o,--output", o.output, "Write here instead of standard output");
}

int run_list(const StoreOptions& o) {
  baseline::Store store = open_store(o);
  const auto entries = store.list(o.limit);
  std::vector<baseline::CheckEntry> checks = store.recent_checks(o.limit);
  if (checks.size() > static_cast<size_t>(o.limit)) checks.resize(static_cast<size_t>(o.limit));
  if (entries.empty() && checks.empty()) {
    fmt::print(std::cerr, "plumb: {} holds no baseline yet\n", store.path());
    return 0;
  }
  if (!entries.empty()) report::print_baseline_list(entries, std::cout);
  if (checks.empty()) return 0;
  fmt::print("{}node checks (plumb check history for each node's runs):\n", entries.empty() ? "" : "\n");
  report::print_check_list(checks, std::cout);
  return 0;
}

int run_show(const StoreOptions& o) {
  baseline::Store store = open_store(o);
  const baseline::Record r = store.load(store.resolve(o.id));
  for (const Shower& s : kShowers) {
    if (s.kind == baseline::kind_of(r)) s.show(r);
  }
  return 0;
}

int run_export(const StoreOptions& o) {
  const std::string output = o.output.empty() ? "-" : o.output;
  const std::vector<NamedPath> outputs = {{"--output", output}};
  const std::vector<NamedPath> inputs = {{"the store", store_path(o)}};
  refuse_overlapping_paths(outputs, inputs);
  baseline::Store store = open_store(o);
  OutputFile file("--output", output);
  const nlohmann::json doc = report::baseline_json(store.load(store.resolve(o.id)));
  file.stream() << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  file.commit();
  return 0;
}

}  // namespace plumb::cli
