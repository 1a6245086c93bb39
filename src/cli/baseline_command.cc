#include "cli/baseline_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "baseline/diff.h"
#include "baseline/record_json.h"
#include "baseline/record_kind.h"
#include "baseline/store.h"
#include "cli/baseline_workload.h"
#include "cli/comm_command.h"
#include "cli/record_source.h"
#include "cli/store_option.h"
#include "comm/agreement.h"
#include "comm/rounds.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/steady_time.h"
#include "common/strings.h"
#include "report/baseline_reporter.h"
#include "report/comm_reporter.h"
#include "report/env_reporter.h"
#include "report/html_report.h"
#include "report/set_html.h"
#include "report/topo_reporter.h"
#include "sysinfo/system_info.h"

namespace plumb::cli {
namespace {

constexpr int kMaxRanks = 65536;

// --sizes MIN:MAX[:FACTOR] into plumb comm's options.
void apply_sizes(const std::string& sizes, CommOptions& c) {
  const std::vector<std::string> parts = split_list(sizes, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    throw Error(fmt::format("--sizes '{}': expected MIN:MAX or MIN:MAX:FACTOR, e.g. 1K:16M:4", sizes));
  }
  c.min_bytes = parts[0];
  c.max_bytes = parts[1];
  if (parts.size() == 3) {
    try {
      c.step_factor = std::stoull(parts[2]);
    } catch (const std::exception&) {
      throw Error(fmt::format("--sizes '{}': the factor '{}' is not a whole number", sizes, parts[2]));
    }
  }
}

// Accelerators this host shows decide the default backend: NCCL on NVIDIA GPUs, else MPI.
std::string backend_of(const std::string& backend) {
  if (backend != "auto") return backend;
  std::error_code ec;
  return std::filesystem::is_directory("/proc/driver/nvidia/gpus", ec) ? "nccl" : "mpi";
}

CommOptions comm_options(const BaselineOptions& o) {
  CommOptions c;
  apply_sizes(!o.sizes.empty() ? o.sizes : o.quick ? "1K:1M:4" : "1K:16M:4", c);
  // Ranks handing a round to the plumb that launched them measure once; ranks started by the
  // user's own launcher measure every round in this one job.
  c.rounds = !o.round_output.empty() ? 1 : o.rounds;
  c.iters = o.iters;
  c.timeout_seconds = o.timeout_seconds;
  c.collectives = o.collectives;
  c.cluster = o.cluster;
  c.backend = backend_of(o.backend);
  c.quiet = o.quiet;
  c.force_progress = o.progress;
  return c;
}

// What is opened before anything is measured, so that a bad path fails in a second.
struct Sinks {
  std::unique_ptr<baseline::Store> store;
  std::unique_ptr<baseline::Record> previous;  // --compare
};

Sinks open_sinks(const BaselineOptions& o) {
  Sinks sinks;
  std::error_code ec;
  std::filesystem::create_directories(o.output_dir, ec);
  if (access(o.output_dir.c_str(), W_OK) != 0) {
    throw Error(fmt::format("--output-dir {}: not a writable folder", o.output_dir));
  }
  sinks.store = std::make_unique<baseline::Store>(baseline::store_location(o.db));
  if (!o.compare.empty()) {
    sinks.previous = std::make_unique<baseline::Record>(load_comm_record(
        o.compare, sinks.store->path(),
        "plumb baseline --compare judges a run against comm measurements; compare step records "
        "with plumb diff"));
  }
  return sinks;
}

baseline::Record make_record(const BaselineOptions& o, const comm::Result& result,
                             nlohmann::json topo) {
  baseline::Record r;
  r.created = result.created;
  r.label = o.label;
  r.hosts = result.hosts;
  r.source = "plumb baseline";
  r.topo = std::move(topo);
  r.env = report::env_record_json(sysinfo::collect_env(sysinfo::ProbeContext{}));
  r.comm = report::comm_result_json(result);
  r.comm.erase("results");
  r.comm.erase("summary");  // derived from the rows whenever shown (comm::summarize), never stored
  r.rows = result.rows;
  return r;
}

// Where the rows of a baseline that did not finish are left (docs/baseline.md).
std::string incomplete_path(const BaselineOptions& o) {
  return (std::filesystem::path(o.output_dir) / "plumb-baseline-incomplete.json").string();
}

std::string write_report(const BaselineOptions& o, const baseline::Record& record,
                         const baseline::Record* previous, const baseline::Diff* diff) {
  const std::string path =
      (std::filesystem::path(o.output_dir) / fmt::format("plumb-baseline-{}.html", record.id)).string();
  OutputFile file("--output-dir", path);
  // A baseline set's page has a section per part (report/set_html); a comm baseline's, the charts.
  const auto write = baseline::holds_set(record) ? report::write_set_html : report::write_html_report;
  write(previous ? *previous : record, previous ? &record : nullptr, diff, file.stream());
  file.commit();
  return path;
}

void print_summary(const baseline::Record& r, double seconds, const std::string& store,
                   const std::string& report) {
  std::ostream& out = std::cout;  // the console: host names and labels come from elsewhere
  fmt::print(out, "plumb baseline {} · {} rank(s) on {} · {} · {} round(s) · {:.0f} s\n", r.id,
             r.comm.value("ranks", 0), join(r.hosts, ","), r.comm.value("backend", "?"),
             r.comm.value("settings", nlohmann::json::object()).value("rounds", 1), seconds);
  if (const std::string job = report::job_summary(r.comm); !job.empty()) {
    fmt::print(out, "slurm    {}\n", job);
  }
  comm::Result result;
  result.rows = r.rows;
  for (const comm::Summary& s : comm::summarize(result)) {
    fmt::print(out, "  {:<14} @ {:<6} {:>8.2f} GB/s avg busbw over {} size(s) ≥ 1 MiB\n",
               s.collective, s.layer, s.avg_busbw_gbps, s.sizes);
  }
  const size_t warnings =
      r.topo.is_object() ? r.topo.value("warnings", nlohmann::json::array()).size() : 0;
  fmt::print(out, "topology {} binding warning(s){}\n", warnings, warnings ? " (plumb topo)" : "");
  fmt::print(out, "stored   baseline {} in {}\n", r.id, store);
  fmt::print(out, "report   {}\n", report);
  fmt::print(out, "next     rerun after a change, then: plumb diff {} latest\n", r.id);
}

// The verdict of --compare, with plumb diff's exit code: 1 a regression, 3 too noisy to judge.
int compare_verdict(const BaselineOptions& o, const baseline::Diff& diff, int64_t id) {
  const int n = diff.regressions();
  fmt::print(std::cout, "compared with {}: {} regression(s) beyond {:.0f}% and the noise{}\n",
             o.compare, n, o.threshold_percent,
             n ? fmt::format(" (plumb diff {} {})", o.compare, id) : "");
  if (n == 0 && diff.too_noisy() > 0) {
    fmt::print(std::cout, "compared with {}: too noisy to judge: {}\n", o.compare,
               diff.too_noisy_advice());
  }
  return diff.exit_code();
}

// The diff against --compare; a pair that cannot be compared (nothing in common) is reported
// after the run is stored, not instead of storing it.
std::unique_ptr<baseline::Diff> compare_with(const BaselineOptions& o, const Sinks& sinks,
                                             const baseline::Record& record,
                                             std::string& problem) {
  if (!sinks.previous) return nullptr;
  try {
    return std::make_unique<baseline::Diff>(
        baseline::diff(*sinks.previous, record, {o.threshold_percent / 100.0}));
  } catch (const Error& e) {
    problem = e.what();
    return nullptr;
  }
}

// Store, compare, report, summary. Returns the exit code.
int finish(const BaselineOptions& o, Sinks& sinks, baseline::Record record, double seconds) {
  for (const auto& note : record.comm.value("notes", nlohmann::json::array())) {
    if (note.is_string()) fmt::print(std::cerr, "plumb: note: {}\n", note.get<std::string>());
  }
  record.id = sinks.store->save(record);
  std::string problem;
  const std::unique_ptr<baseline::Diff> diff = compare_with(o, sinks, record, problem);
  const std::string report =
      write_report(o, record, diff ? sinks.previous.get() : nullptr, diff.get());
  print_summary(record, seconds, sinks.store->path(), report);
  std::error_code ec;
  std::filesystem::remove(incomplete_path(o), ec);  // the rows of a run that stopped: now stored
  if (!problem.empty()) {
    throw Error(fmt::format("--compare {}: baseline {} was stored, but cannot be compared: {}",
                            o.compare, record.id, problem));
  }
  comm::Result result;
  result.rows = record.rows;
  int code = comm::total_wrong(result) > 0 ? static_cast<int>(ExitCode::kCheckFailed) : 0;
  if (diff) {
    const int verdict = compare_verdict(o, *diff, record.id);
    if (code == 0) code = verdict;  // wrong elements (1) outrank a too-noisy comparison (3)
  }
  return code;
}

// What rank 0 writes while measuring: the console tables a line per size (through mpirun to the
// terminal, pipe or file plumb baseline writes to), and the rows in a partial plumb.comm/1 file:
// the round's hand-over file, or plumb-baseline-incomplete.json in --output-dir when the ranks
// measure every round themselves.
struct Streams {
  std::unique_ptr<report::CommConsoleStream> console;
  std::unique_ptr<report::CommJsonStream> partial;

  std::vector<report::CommStreamReporter*> list() const {
    std::vector<report::CommStreamReporter*> out;
    if (console) out.push_back(console.get());
    if (partial) out.push_back(partial.get());
    return out;
  }
};

Streams open_streams(const BaselineOptions& o) {
  Streams s;
  if (!o.quiet) s.console = std::make_unique<report::CommConsoleStream>(std::cout);
  const bool hand_over = !o.round_output.empty();
  s.partial = std::make_unique<report::CommJsonStream>(hand_over ? "--round-output" : "--output-dir",
                                                       hand_over ? o.round_output
                                                                 : incomplete_path(o));
  return s;
}

// One MPI job measures; rank 0 either finishes the baseline itself (started by the user's
// launcher) or hands its round to the plumb that launched it (--round-output).
int run_ranks(const BaselineOptions& o) {
  const CommOptions c = comm_options(o);
  const comm::SweepOptions sweep = to_sweep_options(c);
  // Ranks that plumb baseline launched die with their launcher (mpirun killed with plumb).
  if (!o.round_output.empty()) prctl(PR_SET_PDEATHSIG, SIGKILL);
  comm::MpiSession mpi(nullptr, nullptr, threads_for(sweep));
  auto control = comm::MpiCommunicator::world();
  const bool leader = control->rank() == 0;
  try {
    const auto start = std::chrono::steady_clock::now();
    Sinks sinks;
    nlohmann::json topo = report::collect_topology_json(MPI_COMM_WORLD);
    const bool hand_over = !o.round_output.empty();
    Streams streams;
    const comm::Result result = measure_comm(
        c, sweep, *control,
        [&] {
          if (!hand_over) sinks = open_sinks(o);
          streams = open_streams(o);
        },
        !o.quiet, [&] { return streams.list(); });
    int code = 0;
    comm::agree(*control, [&] {
      if (!leader) return;
      if (streams.console) streams.console->end(result);
      baseline::Record record = make_record(o, result, std::move(topo));
      if (hand_over) {
        write_output("--round-output", o.round_output, report::baseline_json(record).dump());
      } else {
        code = finish(o, sinks, std::move(record), seconds_since(start));
      }
    });
    return control->broadcast_int(code, 0);
  } catch (const Error& e) {
    return comm::exit_agreed(*control, e);
  }
}

// The rounds' records -> one: the first round's context, every key's median round.
baseline::Record combine(std::vector<baseline::Record> rounds) {
  std::vector<comm::Row> all;
  for (const baseline::Record& r : rounds) all.insert(all.end(), r.rows.begin(), r.rows.end());
  baseline::Record record = std::move(rounds.front());
  record.rows = rounds.size() > 1 ? comm::combine_rounds(all) : std::move(all);
  record.comm["settings"]["rounds"] = rounds.size();
  record.comm.erase("summary");  // the first round's: the combined rows have their own
  return record;
}

// A round that did not hand over its result: the rows of the rounds before it and those the
// round wrote to its partial file go to plumb-baseline-incomplete.json ("complete": false).
// Returns what the error message adds ("" when no row was measured).
std::string keep_measured_rows(const BaselineOptions& o, const std::vector<baseline::Record>& done,
                               const std::string& round_file) {
  std::vector<baseline::Record> rounds = done;
  try {
    rounds.push_back(baseline::read_record_file(round_file));
  } catch (const Error&) {  // not started, or cut in the middle of a write: what the rounds kept
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const baseline::Record& r : rounds) {
    for (const comm::Row& row : r.rows) rows.push_back(row);
  }
  if (rows.empty()) return "";
  nlohmann::json doc = rounds.front().comm;
  doc.erase("summary");
  doc["complete"] = false;
  doc["notes"] = nlohmann::json::array({report::kPartialJsonNote});
  doc["results"] = rows;
  try {
    write_output("--output-dir", incomplete_path(o),
                 doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } catch (const Error& e) {
    return fmt::format("; the {} row(s) measured could not be kept: {}", rows.size(), e.what());
  }
  return fmt::format("; the {} row(s) measured are in {}", rows.size(), incomplete_path(o));
}

// The start of the name of the temporary folders of plumb baseline on this host.
std::string folder_prefix() { return fmt::format("plumb-baseline-{}-", host_name()); }

// Folders a plumb baseline on this host left when it was killed by SIGKILL (its process is
// gone) are removed by the next one.
void remove_stale_folders(const std::filesystem::path& tmp) {
  const std::string prefix = folder_prefix();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tmp, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::atol(name.c_str() + prefix.size());
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
}

// A folder under $TMPDIR (else /tmp), plumb-baseline-HOST-PID-XXXXXX, for the rounds' files,
// removed with everything in it on every way out of plumb baseline (an interrupted or failed
// round included) but SIGKILL, and then by the next run on this host.
class TempFolder {
 public:
  TempFolder() {
    std::error_code ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    remove_stale_folders(tmp);
    std::string pattern = (tmp / fmt::format("{}{}-XXXXXX", folder_prefix(), getpid())).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw Error(fmt::format("cannot create a temporary folder {}: {} (set TMPDIR to another "
                              "folder)", pattern, std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A round whose ranks did not hand over a result: why, as an Error (exit 2, or 128 + the signal
// plumb received, as a shell reports a command that a signal ended).
void check_round(const ChildExit& ended, const std::vector<std::string>& launcher, int round,
                 int rounds) {
  const std::string what =
      fmt::format("round {}/{}: the ranks' launcher '{}'", round, rounds, join(launcher, " "));
  if (ended.received != 0) {
    const char* name = ended.received == SIGINT ? "SIGINT" : ended.received == SIGHUP ? "SIGHUP" : "SIGTERM";
    throw Error(fmt::format("interrupted by {} in round {}/{}: the ranks were stopped and the "
                            "temporary files removed",
                            name, round, rounds),
                static_cast<ExitCode>(128 + ended.received));
  }
  if (ended.signal != 0) {
    throw Error(fmt::format("{} was killed by signal {} ({})", what, ended.signal,
                            strsignal(ended.signal)));
  }
  if (ended.code != 0) throw Error(fmt::format("{} exited with status {}", what, ended.code));
}

// Started alone: each round is a fresh MPI job (fresh processes, buffers, placement: what differs
// between two baselines differs between rounds too), then one record from all of them.
baseline::Record rounds_record(const BaselineOptions& o, const std::vector<std::string>& argv) {
  const std::string worker[] = {"baseline", "--worker"};  // after the launcher's words and plumb
  const auto self = std::search(argv.begin(), argv.end(), std::begin(worker), std::end(worker)) - 1;
  const std::vector<std::string> launcher(argv.begin(), self);
  const HeldSignals held;  // a signal between rounds waits until the folder is gone
  const TempFolder folder;
  std::vector<baseline::Record> records;
  for (int round = 1; round <= o.rounds; ++round) {
    const std::string file = fmt::format("{}/round-{}.json", folder.path(), round);
    std::vector<std::string> round_argv = argv;
    round_argv.insert(round_argv.end(), {"--round-output", file});
    if (!o.quiet && Progress::is_terminal(stderr)) round_argv.emplace_back("--progress");
    if (!o.quiet) {
      fmt::print(std::cerr, "plumb baseline: round {}/{}{}\n", round, o.rounds,
                 round == 1 ? ": " + join(round_argv, " ") : "");
    }
    try {
      check_round(run_in_own_group(round_argv), launcher, round, o.rounds);
    } catch (const Error& e) {
      throw Error(e.what() + keep_measured_rows(o, records, file), e.code());
    }
    records.push_back(baseline::read_record_file(file));
  }
  return combine(std::move(records));
}

int launch_rounds(const BaselineOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> argv = ranks_command(o);  // a bad --launcher fails first
  Sinks sinks = open_sinks(o);
  baseline::Record record = rounds_record(o, argv);  // before the clock is read: argument order is unspecified
  return finish(o, sinks, std::move(record), seconds_since(start));
}

// Counts and ranges the options promise; checked before anything starts.
void validate(const BaselineOptions& o) {
  std::vector<std::string> problems;
  if (o.ranks < 0 || o.ranks > kMaxRanks) {
    problems.push_back(fmt::format("--ranks must be from 1 to {} (or left out), got {}", kMaxRanks,
                                   o.ranks));
  }
  if (o.rounds < 1 || o.rounds > comm::kMaxRounds) {
    problems.push_back(fmt::format("--rounds must be from 1 to {}, got {}", comm::kMaxRounds, o.rounds));
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
}

}  // namespace

void setup_baseline(CLI::App& app, BaselineOptions& o) {
  app.add_option("--ranks,-n", o.ranks, "Ranks to start (default: one per accelerator, else per core)")
      ->check(whole_number(1, kMaxRanks));
  app.add_option("--launcher", o.launcher,
                 "Start the ranks with this instead of mpirun, e.g. \"srun -N 4\"; slurm: srun in "
                 "this allocation, one rank per GPU/NPU, the right --mpi (docs/slurm.md)");
  app.add_option("--hostfile", o.hostfile, "mpirun --hostfile for several hosts");
  app.add_option("--label", o.label, "A name for this baseline (e.g. after-driver-update)");
  app.add_flag("--quick", o.quick, "Sizes 1K to 1M: a smoke test in seconds");
  app.add_option("--collectives", o.collectives, "Comma-separated list")->capture_default_str();
  app.add_option("--sizes", o.sizes, "MIN:MAX[:FACTOR] (default 1K:16M:4)");
  app.add_option("--rounds", o.rounds, "Measure the sweep this many times, each a fresh MPI job")
      ->capture_default_str()->check(whole_number(1, comm::kMaxRounds));
  app.add_option("--iters", o.iters, "Timed iterations per size")->capture_default_str()
      ->check(whole_number(1, comm::kMaxIters));
  app.add_option("--timeout", o.timeout_seconds,
                 "Seconds one measurement (one size of one collective) may take before the job "
                 "is aborted, naming the ranks that stopped (0: no watchdog, MPI without threads)")
      ->capture_default_str()->check(whole_number(0, comm::kMaxTimeoutSeconds));
  app.add_option("--cluster", o.cluster, "Cluster map (YAML; see docs/comm.md)");
  app.add_option("--backend", o.backend, "auto (nccl with NVIDIA GPUs, else mpi), mpi or nccl")
      ->capture_default_str();
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.add_option("-o,--output-dir", o.output_dir, "Where the HTML report goes")->capture_default_str();
  app.add_option("--compare", o.compare, "A baseline (id, latest or JSON) to diff against; exit 1 on a regression");
  app.add_option("-t,--threshold", o.threshold_percent, "Percent, for --compare")->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "No progress line");
  add_workload_options(app, o);
  app.add_flag("--worker", o.worker, "Internal: set in the ranks plumb baseline starts")->group("");
  app.add_option("--round-output", o.round_output, "Internal: where a rank hands its round")->group("");
  app.add_flag("--progress", o.progress, "Internal: draw the progress line under mpirun")->group("");
}

baseline::Record measure_rounds(const BaselineOptions& o) {
  return rounds_record(o, ranks_command(o));
}

std::string write_baseline_report(const BaselineOptions& o, const baseline::Record& record) {
  return write_report(o, record, nullptr, nullptr);
}

int run_baseline(const BaselineOptions& o) {
  validate(o);
  if (o.workload || !o.job.command.empty()) return run_workload_baseline(o);
  to_sweep_options(comm_options(o));  // bad sizes fail here, before any rank starts
  const bool rank = o.worker || (o.launcher.empty() && o.hostfile.empty() && o.ranks == 0 &&
                                 started_by_mpi_launcher());
  return rank ? run_ranks(o) : launch_rounds(o);
}

}  // namespace plumb::cli
