#include "cli/report_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "baseline/diff.h"
#include "cli/record_source.h"
#include "common/error.h"
#include "report/html_report.h"

namespace plumb::cli {
namespace {

// Before any work: the report would be lost after minutes of loading otherwise.
void check_writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    throw Error(fmt::format("-o {}: cannot write: is a directory", path));
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    throw Error(fmt::format("-o {}: cannot write: folder {} does not exist", path, dir.string()));
  }
  const bool exists = fs::exists(target, ec);
  if (access(exists ? path.c_str() : dir.c_str(), W_OK) != 0) {
    throw Error(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
  }
}

void write_file(const std::string& path, const baseline::Record& a, const baseline::Record* b,
                const baseline::Diff* d) {
  std::ofstream file(path, std::ios::binary);
  if (!file) throw Error(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
  report::write_html_report(a, b, d, file);
  file.close();
  if (file.fail()) throw Error(fmt::format("{}: writing failed (disk full?)", path));
}

}  // namespace

void setup_report(CLI::App& app, ReportOptions& o) {
  app.add_option("A", o.a,
                 "A baseline id, latest, or a JSON file (plumb export, plumb comm --json)")
      ->required();
  app.add_option("B", o.b, "A second one, overlaid on A and judged against it");
  app.add_option("-o,--output", o.output, "The HTML file (- for standard output)")
      ->capture_default_str();
  app.add_option("--db", o.db, "The store (default $XDG_DATA_HOME/plumb/plumb.db)");
  app.add_option("-t,--threshold", o.threshold_percent,
                 "Percent: a smaller busbw change is never a regression")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
}

int run_report(const ReportOptions& o) {
  const bool to_stdout = o.output == "-";
  if (!to_stdout) check_writable(o.output);
  const baseline::Record a = load_record(o.a, o.db);
  std::optional<baseline::Record> b;
  std::optional<baseline::Diff> d;
  if (!o.b.empty()) {
    b = load_record(o.b, o.db);
    d = baseline::diff(a, *b, {o.threshold_percent / 100.0});
  }
  const baseline::Record* pb = b ? &*b : nullptr;
  const baseline::Diff* pd = d ? &*d : nullptr;
  if (to_stdout) {
    report::write_html_report(a, pb, pd, std::cout);
    return 0;
  }
  write_file(o.output, a, pb, pd);
  fmt::print("report: {}\n", o.output);
  return 0;
}

}  // namespace plumb::cli
