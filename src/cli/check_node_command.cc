// plumb check node, genconf and list (docs/check.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "check/check_file.h"
#include "check/node_run.h"
#include "cli/check_scheduler.h"
#include "cli/check_store.h"
#include "cli/check_subcommands.h"
#include "cli/store_option.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/strings.h"
#include "report/check_reporter.h"

extern char** environ;

namespace plumb::cli {
namespace {

// A tool that takes longer on a healthy node is itself a finding; the whole pass stays under
// Slurm's 60 s HealthCheckProgram limit and near the 10 s target.
constexpr double kDefaultToolTimeoutS = 5.0;

struct ProbeOptions {
  std::string config;
  std::string root = "/";
  std::optional<double> timeout;
  std::string checkpoint_dir;
  std::string host;
};

struct NodeOptions {
  ProbeOptions probe;
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::string json;
  std::string textfile;
  bool quiet = false;
  bool store = false;
  std::string db;
  CheckSchedulerOptions scheduler;
};

struct GenconfOptions {
  ProbeOptions probe;
  std::string sku;
  std::string output = "-";
};

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return vars;
}

check::CheckFile read_file(const ProbeOptions& o) {
  return o.config.empty() ? check::CheckFile{} : check::load_check_file(o.config);
}

// The context from the options, then the check file's settings, then the defaults.
check::NodeContext make_context(const ProbeOptions& o, const check::CheckFile& file) {
  check::NodeContext c;
  c.root = o.root;
  c.tool_timeout_s = o.timeout.value_or(file.tool_timeout_s.value_or(kDefaultToolTimeoutS));
  c.environment = process_environment();
  c.checkpoint_dir = !o.checkpoint_dir.empty() ? o.checkpoint_dir : file.checkpoint_dir.value_or("");
  c.host = !o.host.empty() ? o.host : host_name();
  return c;
}

void add_probe_options(CLI::App* sub, ProbeOptions& o) {
  sub->add_option("--root", o.root,
                  "Read sysfs, procfs and /etc under DIR (a copy of another node's tree)")
      ->capture_default_str();
  sub->add_option("--timeout", o.timeout,
                  "Seconds each tool (nvidia-smi, npu-smi, hccn_tool, ...) may take (default: the "
                  "check file's settings.tool_timeout_s, else 5)")
      ->check(CLI::Range(0.1, 60.0));
  sub->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "Check the free space here (default: the check file's settings.checkpoint_dir)");
  sub->add_option("--host", o.host, "The node's name in outputs (default: this host's name)");
}

// --store: the pass into the store, then the node's own history: a check it failed in 3 of its
// last 5 runs is said after the table (the verdict itself is this pass's).
void store_and_judge_history(const check::NodeReport& report, const NodeOptions& o, std::ostream& out) {
  const int64_t id = store_check_report(report, "node", o.db);
  fmt::print(out, "plumb check: stored as check record {}\n", id);
  for (const check::Offender& off : offenders_in(o.db, report.host, check::kDefaultOffenderFailures,
                                                 check::kDefaultOffenderRuns)) {
    fmt::print(out, "repeat offender: {}\n", check::describe(off));
  }
}

int run_node(const NodeOptions& o) {
  check::check_selection(o.only, "--only");
  check::check_selection(o.skip, "--skip");
  std::optional<OutputFile> json;
  if (!o.json.empty()) json.emplace("--json", o.json);
  std::optional<OutputFile> textfile;
  if (!o.textfile.empty()) textfile.emplace("--textfile", o.textfile);
  const check::CheckFile file = read_file(o.probe);
  const check::NodeContext context = make_context(o.probe, file);
  const check::NodeReport report = check::run_node_checks(context, file, {o.only, o.skip, 0});
  if (json) {
    json->stream() << report::check_json(report).dump(2) << "\n";
    json->commit();
  }
  if (textfile) {
    report::write_check_textfile(report, textfile->stream());
    textfile->commit();
  }
  std::ostream& console = o.json == "-" ? std::cerr : std::cout;
  if (o.store) store_and_judge_history(report, o, console);
  if (scheduler_mode(o.scheduler)) return act_for_scheduler(report, o.scheduler, console);
  if (o.quiet) {
    fmt::print(console, "{}\n", report::check_summary_line(report));
  } else {
    report::print_check_console(report, console);
  }
  return check::exit_code(report.status());
}

int run_genconf(const GenconfOptions& o) {
  OutputFile out("-o", o.output);
  const check::NodeContext context = make_context(o.probe, check::CheckFile{});
  out.stream() << check::write_check_file(context, o.sku, utc_timestamp());
  out.commit();
  if (!out.is_stdout()) fmt::print(std::cerr, "plumb: wrote {}\n", o.output);
  return 0;
}

int run_check_list() {
  for (const check::CheckSpec& spec : check::node_checks()) {
    const std::string keys = spec.keys.empty() ? "" : " [" + join(spec.keys, ", ") + "]";
    fmt::print("{:<22} {}{}\n", spec.name, spec.summary, keys);
  }
  return 0;
}

}  // namespace

void setup_check_node(CLI::App& check, std::function<int()>& selected) {
  auto o = std::make_shared<NodeOptions>();
  CLI::App* sub = check.add_subcommand(
      "node", "One fast pass over this node: accelerators, PCIe links, NICs and RoCE, host "
              "settings, versions; exit 0 ok, 1 warning, 2 critical, 3 unknown");
  sub->add_option("--config", o->probe.config,
                  "The check file (plumb check genconf writes one from a known-good node)");
  add_probe_options(sub, o->probe);
  sub->add_option("--only", o->only, "Run only these checks or categories (comma-separated)")
      ->delimiter(',');
  sub->add_option("--skip", o->skip, "Leave out these checks or categories (comma-separated)")
      ->delimiter(',');
  sub->add_option("--json", o->json, "Write plumb.check/1 here (- for standard output)");
  sub->add_option("--textfile", o->textfile,
                  "Write the verdicts for node_exporter's textfile collector here (*.prom)");
  sub->add_flag("-q,--quiet", o->quiet, "Print only the verdict line");
  sub->add_flag("--store", o->store,
                "Keep this pass in the store (plumb check history; plumb list) and say when the "
                "node failed the same check in 3 of its last 5 runs");
  sub->add_option("--db", o->db, std::string("--store writes to it. ") + kStoreOptionHelp);
  add_check_scheduler_options(*sub, o->scheduler);
  sub->callback([o, &selected] { selected = [o] { return run_node(*o); }; });
}

void setup_check_genconf(CLI::App& check, std::function<int()>& selected) {
  auto o = std::make_shared<GenconfOptions>();
  CLI::App* sub = check.add_subcommand(
      "genconf", "Write a check file from this (known-good) node: its values become the expected ones");
  add_probe_options(sub, o->probe);
  sub->add_option("--sku", o->sku, "The SKU this file is for (e.g. '8x H100 SXM5, 8x CX7 400G')");
  sub->add_option("-o,--output", o->output, "The check file (- for standard output)")
      ->capture_default_str();
  sub->callback([o, &selected] { selected = [o] { return run_genconf(*o); }; });
}

void setup_check_list(CLI::App& check, std::function<int()>& selected) {
  CLI::App* sub = check.add_subcommand("list", "Every node check, what it compares, and its check-file keys");
  sub->callback([&selected] { selected = [] { return run_check_list(); }; });
}

}  // namespace plumb::cli
