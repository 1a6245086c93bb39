#include "cli/store_admin_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>
#include <vector>

#include "baseline/store.h"
#include "baseline/store_copy.h"
#include "baseline/store_integrity.h"
#include "cli/store_option.h"
#include "common/error.h"
#include "common/progress.h"

namespace plumb::cli {
namespace {

// The progress line is redrawn every this many records: often enough to see a large store move,
// rarely enough to cost nothing beside a transaction per record.
constexpr size_t kProgressEvery = 1000;

// "baselines 1-120 are 201-320", "baseline 7 is 12": runs of ids that moved by the same offset.
void print_moves(const std::vector<baseline::IdMove>& moved, const char* one, const char* many,
                 const std::string& to, std::ostream& out) {
  for (size_t i = 0; i < moved.size();) {
    size_t end = i + 1;
    while (end < moved.size() && moved[end].from == moved[end - 1].from + 1 &&
           moved[end].to == moved[end - 1].to + 1) {
      ++end;
    }
    if (end - i == 1) {
      fmt::print(out, "{} {} is {} in {}\n", one, moved[i].from, moved[i].to, to);
    } else {
      fmt::print(out, "{} {}-{} are {}-{} in {}\n", many, moved[i].from, moved[end - 1].from,
                 moved[i].to, moved[end - 1].to, to);
    }
    i = end;
  }
}

std::string already(int64_t n) { return n > 0 ? fmt::format(" ({} already there)", n) : ""; }

void print_copy(const baseline::CopyResult& r, std::ostream& out) {
  fmt::print(out, "copied {} records{} and {} check passes{} from {} to {}\n", r.copied,
             already(r.already), r.checks_copied, already(r.checks_already), r.from, r.to);
  print_moves(r.moved, "baseline", "baselines", r.to, out);
  print_moves(r.moved_checks, "check pass", "check passes", r.to, out);
}

void print_checks(const std::string& store, const std::vector<baseline::StoreCheck>& checks,
                  std::ostream& out) {
  fmt::print(out, "{}:\n", store);
  for (const baseline::StoreCheck& c : checks) {
    if (c.problems.empty()) fmt::print(out, "  {}: {}\n", c.name, c.fine);
    for (const std::string& p : c.problems) fmt::print(out, "  {}: {}\n", c.name, p);
  }
}

void setup_copy(CLI::App& store, std::function<int()>& selected) {
  CLI::App* sub = store.add_subcommand(
      "copy", "Every record of one store into another (SQLite into PostgreSQL and back); a record "
              "already there is skipped");
  auto o = std::make_shared<StoreCopyOptions>();
  sub->add_option("from", o->from, "The store to read: a file, or postgresql://USER@HOST:PORT/DB")
      ->required();
  sub->add_option("to", o->to, "The store to write (created when missing)")->required();
  sub->add_flag("--progress", o->progress, "Show progress even when stderr is not a terminal");
  sub->callback([&selected, o] { selected = [o] { return run_store_copy(*o); }; });
}

void setup_integrity(CLI::App& store, std::function<int()>& selected) {
  CLI::App* sub = store.add_subcommand(
      "check", "A store's schema version and integrity; reads only (exit 1 when a check fails)");
  auto o = std::make_shared<StoreCheckOptions>();
  sub->add_option("--db", o->db, kStoreOptionHelp);
  sub->callback([&selected, o] { selected = [o] { return run_store_check(*o); }; });
}

}  // namespace

void setup_store(CLI::App& app, StoreAdminOptions& options) {
  app.require_subcommand(1);
  setup_copy(app, options.selected);
  setup_integrity(app, options.selected);
}

int run_store(const StoreAdminOptions& options) {
  return options.selected ? options.selected() : static_cast<int>(ExitCode::kBadInput);
}

int run_store_copy(const StoreCopyOptions& o) {
  Progress progress(stderr, o.progress || Progress::is_terminal(stderr));
  const auto on_record = [&](size_t done, size_t total) {
    if (done % kProgressEvery == 0 || done == total) progress.update(done, total, "records copied");
  };
  const baseline::CopyResult result = baseline::copy_store(o.from, o.to, on_record);
  progress.clear();
  print_copy(result, std::cout);
  return 0;
}

int run_store_check(const StoreCheckOptions& o) {
  baseline::Store store(baseline::store_location(o.db), baseline::StoreMode::kReadOnly);
  const std::vector<baseline::StoreCheck> checks = baseline::check_store_integrity(store);
  print_checks(store.path(), checks, std::cout);
  for (const baseline::StoreCheck& c : checks) {
    if (!c.problems.empty()) return static_cast<int>(ExitCode::kCheckFailed);
  }
  return 0;
}

}  // namespace plumb::cli
