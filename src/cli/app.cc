#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/baseline_command.h"
#include "cli/check_command.h"
#include "cli/checkpoint_command.h"
#include "cli/completion_command.h"
#include "cli/exporter_command.h"
#include "cli/alert_relay_command.h"
#include "cli/comm_command.h"
#include "cli/diff_command.h"
#include "cli/env_command.h"
#include "cli/import_command.h"
#include "cli/k8s_command.h"
#include "cli/mem_command.h"
#include "cli/step_command.h"
#include "cli/run_command.h"
#include "cli/recover_command.h"
#include "cli/plan_command.h"
#include "cli/precision_command.h"
#include "cli/report_command.h"
#include "cli/serve_command.h"
#include "cli/store_admin_command.h"
#include "cli/store_commands.h"
#include "cli/topo_command.h"
// monitoring: alerts and dashboard
#include "cli/alerts_command.h"
#include "cli/dashboard_command.h"
#include "cli/command.h"
#include "baseline/store.h"
#include "baseline/store_url.h"
#include "common/config.h"
#include "common/console.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/strings.h"

namespace plumb::cli {
namespace {

// Under a launcher every rank parses the same argv: only rank 0 speaks about usage.
bool speaks() { return launcher_rank() == 0; }

// Messages quote file names and file content: escaped, so that no imported byte drives the
// terminal.
void print_error(const std::string& message) {
  if (speaks()) fmt::print(stderr, "plumb: error: {}\n", terminal_safe(message, true));
}

// The command, then the check that what it printed reached standard output (a full disk, a
// closed pipe): a result that was not delivered is not a success.
int run_selected(const std::function<int()>& selected) {
  const int code = selected();
  check_stdout();
  return code;
}

// plumb --version: the version, then the store a command would open without --db and the config
// files read (docs/store.md). A wrong config file is said here, not refused: the version still
// shows. Passwords masked, as everywhere.
std::string version_text() {
  std::string text = fmt::format("plumb {}", PLUMB_VERSION);
  try {
    const baseline::StoreChoice store = baseline::choose_store("");
    text += fmt::format("\nstore:  {} ({})", baseline::redact_store_url(store.location), store.origin);
  } catch (const Error& e) {
    text += fmt::format("\nstore:  unknown: {}", baseline::redact_store_url(e.what()));
  }
  try {
    const Config config = read_config(config_paths());
    text += config.read.empty()
                ? fmt::format("\nconfig: none (looked for {})", join(config.looked_in, ", "))
                : fmt::format("\nconfig: {}", join(config.read, ", "));
  } catch (const Error& e) {
    text += fmt::format("\nconfig: wrong: {}", baseline::redact_store_url(e.what()));
  }
  return text;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& c : commands()) names.push_back(c.name);
  return names;
}

// argv[1] when it is meant as a command but names none: ninja's "did you mean" for subtools.
std::optional<std::string> unknown_command(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  for (const Command& c : commands()) {
    if (c.name == word) return std::nullopt;
  }
  return word;
}

// A table entry's setup: a fresh options struct, declared on the subcommand by `setup`, read by
// `run` once parsed.
template <class Options>
std::function<std::function<int()>(CLI::App&)> command(void (*setup)(CLI::App&, Options&),
                                                       int (*run)(const Options&)) {
  return [setup, run](CLI::App& sub) {
    auto options = std::make_shared<Options>();
    setup(sub, *options);
    return std::function<int()>([options, run] { return run(*options); });
  };
}

}  // namespace

std::span<const Command> commands() {
  static const std::vector<Command> kTable = {
      {"baseline", "The main job: topology, versions, a comm sweep; stored, with an HTML report",
       command(setup_baseline, run_baseline)},
      {"comm", "Collective benchmark per topology layer: bandwidth and tail latency",
       command(setup_comm, run_comm)},
      {"topo", "Where every rank sits: packages, NUMA, PCI accelerators and NICs, CPU binding",
       command(setup_topo, run_topo)},
      {"env", "Versions and settings that change results (driver, CUDA, NCCL, CANN, torch, ...)",
       command(setup_env, run_env)},
      {"import", "Other tools' logs (nccl-tests, hccl_test, OSU) into stored baselines",
       command(setup_import, run_import)},
      {"list", "Stored baselines, newest first", command(setup_list, run_list)},
      {"show", "One stored baseline: context and average busbw per layer and collective",
       command(setup_show, run_show)},
      {"export", "One stored baseline as JSON (plumb.baseline/1)",
       command(setup_export, run_export)},
      {"store", "The store itself: copy every record into another store; check its integrity",
       command(setup_store, run_store)},
      {"report",
       "One self-contained HTML file: charts per layer and collective, two baselines overlaid",
       command(setup_report, run_report)},
      {"diff", "Two baselines compared: regressions beyond noise, and what else changed",
       command(setup_diff, run_diff)},
      {"mem", "Allocator traces: peaks, fragmentation, creep (leaks) and the cause of an OOM",
       command(setup_mem, run_mem)},
      {"step",
       "Profiler traces of all ranks: where each step went, exposed communication, stragglers, "
       "collectives against their baseline",
       command(setup_step, run_step)},
      {"run", "Supervise a training job: detect a crash or a hang, stop its process tree, restart it",
       command(setup_run, run_run)},
      {"recover",
       "Run plumb run's recovery steps once on this host: clear cache, reset devices, check links",
       command(setup_recover, run_recover)},
      {"checkpoint",
       "A checkpoint's manifest: seal it, verify it, find the one plumb run resumes from",
       command(setup_checkpoint, run_checkpoint)},
      // node health: checks, drain, burn-in, the slow link
      {"check",
       "Node health: accelerators, PCIe, network and RoCE, host settings, versions against a "
       "check file; Slurm drain; burn-in; the slow node or link across the fleet",
       command(setup_check, run_check)},
      // serving: the inference side of the baseline
      {"serve",
       "Inference serving under load: TTFT, ITL, TPOT and E2E from each request's scheduled "
       "time, goodput under SLOs, the best batch per card, tokens per joule, cost per million "
       "tokens",
       command(setup_serve, run_serve)},
      // clusters: the manifests that run plumb under Kubernetes' gang schedulers
      {"k8s", "Kubernetes manifests: plumb baseline across N nodes under Volcano or Kueue",
       command(setup_k8s, run_k8s)},
      {"plan",
       "Predict step time, MFU, memory and goodput of a parallel layout; search, scale, validate",
       command(setup_plan, run_plan)},
      {"precision",
       "Operator outputs against a reference: tensor files, directories or msprobe dumps; the "
       "first operator that went wrong",
       command(setup_precision, run_precision)},
      // monitoring: the exporter, the rules on top of every exporter, the board, the chat
      {"exporter",
       "Serve this host's metrics to Prometheus: devices, training events, comm probe; /healthz",
       command(setup_exporter, run_exporter)},
      {"alerts",
       "Prometheus rules: every exporter's spelling into plumb: series, plumb's alerts; their "
       "promtool tests",
       command(setup_alerts, run_alerts)},
      {"dashboard", "A Grafana dashboard on the plumb: series (devices, bandwidth, training)",
       command(setup_dashboard, run_dashboard)},
      {"alert-relay",
       "Alertmanager's webhook into the on-call chat: Feishu/Lark, Slack, a JSON webhook",
       command(setup_alert_relay, run_alert_relay)},
      // packaging: the shell completion scripts the Debian package installs
      {"completion", "Shell completion for bash or zsh, from this command table",
       command(setup_completion, run_completion)},
  };
  return kTable;
}

void declare_cli(CLI::App& app, std::function<int()>& selected) {
  app.description("plumb measures an AI training cluster and keeps what it measured as a baseline.");
  app.name("plumb");
  app.set_version_flag("--version", version_text,
                       "The version, the store a command opens without --db, the config files read");
  app.require_subcommand(1);
  for (const Command& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    auto run = c.setup(*sub);
    sub->callback([&selected, run] { selected = run; });
  }
}

int run_main(int argc, char** argv) {
  if (auto word = unknown_command(argc, argv)) {
    const std::vector<std::string> names = command_names();
    print_error(fmt::format("unknown command '{}'{}; commands: {}", *word,
                            did_you_mean(*word, names), join(names, ", ")));
    return static_cast<int>(ExitCode::kBadInput);
  }
  CLI::App app;
  std::function<int()> selected;
  declare_cli(app, selected);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      if (speaks()) app.exit(e);
      return 0;
    }
    print_error(std::string(e.what()) + "; run 'plumb --help' for usage");
    return static_cast<int>(ExitCode::kBadInput);
  }
  clean_outputs_on_signals();
  make_console_terminal_safe();
  try {
    return run_selected(selected);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
  } catch (const std::exception& e) {
    print_error(fmt::format("unexpected error: {}", e.what()));
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace plumb::cli
