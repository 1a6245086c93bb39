#include "cli/comm_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "comm/agreement.h"
#include "comm/backends.h"
#include "comm/cluster_map.h"
#include "comm/mpi_backend.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/partial_file.h"
#include "common/progress.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/comm_reporter.h"
#include "sysinfo/slurm_job.h"

namespace plumb::cli {
namespace {

// Environment variables that change collective results, recorded with every run.
constexpr std::string_view kEnvPrefixes[] = {"NCCL_", "HCCL_", "OMPI_", "UCX_"};

// Runs `parse` and keeps its message instead of stopping, so all problems are reported at once.
template <class Fn>
void collect(std::vector<std::string>& problems, Fn&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    problems.push_back(e.what());
  }
}

// Output files are created before the sweep runs, so a bad path fails in a second, not after the
// measurement; they replace their targets whole once the sweep is done. Meanwhile the console
// and the partial files beside the targets (partial_path: "out.json.partial", docs/outputs.md)
// get every size's rows as they are measured; each partial file is removed once its target is
// written. "-" is standard output.
struct CommOutputs {
  std::optional<OutputFile> json;
  std::optional<OutputFile> csv;
  std::ostream* console = &std::cout;
  std::unique_ptr<report::CommConsoleStream> console_stream;  // null with --quiet
  std::unique_ptr<report::CommJsonStream> json_partial;       // null for "-", a device, a FIFO
  std::unique_ptr<report::CommCsvStream> csv_partial;

  std::vector<report::CommStreamReporter*> streams() const {
    std::vector<report::CommStreamReporter*> out;
    if (console_stream) out.push_back(console_stream.get());
    if (json_partial) out.push_back(json_partial.get());
    if (csv_partial) out.push_back(csv_partial.get());
    return out;
  }
};

// The outputs, partial files included: "--json r.partial --csv r" would write one file twice.
std::vector<NamedPath> output_paths(const CommOptions& o) {
  std::vector<NamedPath> outputs = {{"--json", o.json}, {"--csv", o.csv}};
  for (const NamedPath& target : {outputs[0], outputs[1]}) {
    if (PartialFile::wanted(target.path)) {
      outputs.push_back({target.option + "'s partial file", partial_path(target.path)});
    }
  }
  return outputs;
}

std::unique_ptr<CommOutputs> open_outputs(const CommOptions& o) {
  auto out = std::make_unique<CommOutputs>();
  if (o.json == "-" && o.csv == "-") throw Error("--json - and --csv - cannot both use standard output");
  const std::vector<NamedPath> inputs = {{"--cluster", o.cluster}};
  refuse_overlapping_paths(output_paths(o), inputs);
  if (!o.json.empty()) out->json.emplace("--json", o.json);
  if (!o.csv.empty()) out->csv.emplace("--csv", o.csv);
  if (o.json == "-" || o.csv == "-") out->console = &std::cerr;
  if (!o.quiet) out->console_stream = std::make_unique<report::CommConsoleStream>(*out->console);
  if (PartialFile::wanted(o.json)) {
    out->json_partial = std::make_unique<report::CommJsonStream>("--json", partial_path(o.json));
  }
  if (PartialFile::wanted(o.csv)) {
    out->csv_partial = std::make_unique<report::CommCsvStream>("--csv", partial_path(o.csv));
  }
  return out;
}

// What started the ranks, told by the variables each launcher sets in every process it starts
// (the first that matches: Open MPI's mpirun also sets PMIx variables, and runs under Slurm).
struct LauncherSign {
  const char* variable;
  const char* name;
};
constexpr LauncherSign kLauncherSigns[] = {
    {"OMPI_COMM_WORLD_SIZE", "mpirun (Open MPI)"},
    {"MV2_COMM_WORLD_SIZE", "mpirun (MVAPICH2)"},
    {"SLURM_STEP_ID", "srun"},
    {"PMI_SIZE", "mpiexec (Hydra or another PMI launcher)"},
    {"PMIX_RANK", "a PMIx launcher"},
};

void fill_context(comm::Result& result, const comm::SweepOptions& s,
                  std::optional<sysinfo::SlurmJob> job) {
  result.launcher = launcher_name([](const char* name) { return std::getenv(name); });
  result.created = utc_timestamp();
  result.job = std::move(job);
  result.env = capture_environment(kEnvPrefixes);
  result.hosts.clear();
  std::set<std::string> seen;
  for (const comm::RankPlace& r : result.placement.ranks) {
    if (seen.insert(r.host).second) result.hosts.push_back(r.host);
  }
  result.settings = {s.min_bytes, s.max_bytes, s.step_bytes ? 0 : s.step_factor, s.step_bytes,
                     s.iters,     s.warmup,    s.check,     std::string(comm::info(s.type).name),
                     std::string(comm::name(s.op)), s.root, s.rounds};
}

// The sweep's context before its first row (what the streams' begin() and the partial files
// show), and the same context on the finished result.
comm::Result context_of(const comm::Communicator& world, const comm::Placement& placement,
                        const std::vector<comm::Layer>& layers) {
  comm::Result context;
  context.backend = std::string(world.backend());
  context.ranks = world.size();
  context.placement = placement;
  context.layers = layers;
  return context;
}

void copy_context(const comm::Result& context, comm::Result& result) {
  result.created = context.created;
  result.launcher = context.launcher;
  result.job = context.job;
  result.env = context.env;
  result.hosts = context.hosts;
  result.settings = context.settings;
}

// Puts a finished file in place, then removes its partial form: a commit that fails (a full
// disk) leaves the partial file, the rows measured.
template <class Partial>
void commit(std::optional<OutputFile>& file, const std::unique_ptr<Partial>& partial) {
  if (!file) return;
  file->commit();
  if (!file->is_stdout()) fmt::print(std::cerr, "plumb: wrote {}\n", file->path());
  if (partial) partial->discard();
}

// Returns the exit code: 1 when any element was wrong.
int write_reports(const comm::Result& result, CommOutputs& out) {
  if (result.ranks == 1) {
    fmt::print(std::cerr, "plumb: note: only 1 rank: no data crosses a link; start plumb under an "
                       "MPI launcher, e.g. mpirun -np 4 plumb comm\n");
  }
  for (const std::string& note : result.notes) fmt::print(std::cerr, "plumb: note: {}\n", note);
  if (out.console_stream) out.console_stream->end(result);
  if (out.json) report::CommJsonReporter().report(result, out.json->stream());
  if (out.csv) report::CommCsvReporter().report(result, out.csv->stream());
  commit(out.json, out.json_partial);
  commit(out.csv, out.csv_partial);
  const int64_t wrong = comm::total_wrong(result);
  if (wrong == 0) return 0;
  fmt::print(std::cerr, "plumb: {} wrong element(s): the collectives returned incorrect data\n", wrong);
  return static_cast<int>(ExitCode::kCheckFailed);
}

// Ranks per host as the launcher placed them (real hosts, not the map's simulated nodes).
int ranks_on_host(const comm::Placement& placement, const std::string& host) {
  int count = 0;
  for (const comm::RankPlace& r : placement.ranks) count += r.host == host ? 1 : 0;
  return count;
}

// Everything `plumb comm` prepares before measuring, agreed by every rank.
struct Prepared {
  std::optional<sysinfo::SlurmJob> job;  // rank 0's: the job, its node list, this step
  comm::Placement placement;
  std::vector<comm::Layer> layers;
  std::unique_ptr<comm::Communicator> world;
};

Prepared prepare(const CommOptions& o, const comm::SweepOptions& sweep,
                 comm::MpiCommunicator& control, const std::function<void()>& before) {
  Prepared p;
  std::optional<comm::ClusterMap> map;
  comm::agree(control, [&] {
    if (control.rank() == 0 && before) before();
    if (control.rank() == 0) p.job = sysinfo::slurm_job();
    if (!o.cluster.empty()) map = comm::load_cluster_map(o.cluster);
  });
  const std::vector<std::string> hosts = control.all_gather_strings(host_name());
  const std::vector<std::string> ids = control.all_gather_strings(std::to_string(control.node_id()));
  comm::agree(control, [&] {
    std::vector<int> node_ids;
    for (const std::string& id : ids) node_ids.push_back(std::stoi(id));
    p.placement = map ? comm::place_by_map(*map, hosts) : comm::place_by_host(hosts, node_ids);
    p.layers = comm::plan_layers(p.placement, sweep);
    if (o.backend == "mpi") {
      const auto pages = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES));
      const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
      comm::check_host_memory(sweep, p.layers, ranks_on_host(p.placement, host_name()),
                              pages * page);
    }
  });
  p.world = comm::find_backend(o.backend).make(comm::MpiCommunicator::world());
  return p;
}

}  // namespace

std::string launcher_name(const std::function<const char*(const char*)>& getenv) {
  for (const LauncherSign& sign : kLauncherSigns) {
    const char* value = getenv(sign.variable);
    // An sbatch script has SLURM_STEP_ID "batch" (or none) and is not one of the job's ranks.
    if (value != nullptr && std::string_view(value) != "batch") return sign.name;
  }
  return "none (one process)";
}

comm::MpiSession::Threads threads_for(const comm::SweepOptions& sweep) {
  return sweep.timeout_seconds > 0 ? comm::MpiSession::kThreads : comm::MpiSession::kOneThread;
}

CLI::Validator whole_number(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == text.size() && used > 0 && value >= min && value <= max) return "";
        return fmt::format("must be a whole number from {} to {}, got {}", min, max, text);
      },
      fmt::format("{} to {}", min, max));
}

void setup_comm(CLI::App& app, CommOptions& o) {
  app.add_option("-b,--min-bytes", o.min_bytes, "Smallest size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--max-bytes", o.max_bytes, "Largest size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-f,--step-factor", o.step_factor, "Multiply the size by this at each step")
      ->capture_default_str();
  app.add_option("-i,--step-bytes", o.step_bytes, "Add this many bytes at each step instead");
  app.add_option("-n,--iters", o.iters, "Timed iterations per size")->capture_default_str()
      ->check(whole_number(1, comm::kMaxIters));
  app.add_option("-w,--warmup", o.warmup, "Untimed iterations before each size")->capture_default_str()
      ->check(whole_number(0, comm::kMaxIters));
  app.add_option("--rounds", o.rounds,
                 "Measure the whole sweep this many times; keep the median and the spread")
      ->capture_default_str()->check(whole_number(1, comm::kMaxRounds));
  app.add_option("--timeout", o.timeout_seconds,
                 "Seconds one measurement (one size of one collective) may take before the job "
                 "is aborted, naming the ranks that stopped (0: no watchdog, MPI without threads)")
      ->capture_default_str()->check(whole_number(0, comm::kMaxTimeoutSeconds));
  app.add_option("-d,--dtype", o.dtype, "float32, float16, bfloat16, float64, int32, int8")
      ->capture_default_str();
  app.add_option("-o,--op", o.op, "Reduction: sum, prod, max, min, avg")->capture_default_str();
  app.add_option("-r,--root", o.root, "Root rank of broadcast and reduce")->capture_default_str()
      ->check(whole_number(0, INT_MAX));
  app.add_option("-c,--check", o.check, "Check results (1) or not (0)")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}));
  app.add_option("--collectives", o.collectives, "Comma-separated list")->capture_default_str();
  app.add_option("--layers", o.layers, "Comma-separated: world, node, rail, spine")
      ->capture_default_str();
  app.add_option("--cluster", o.cluster, "Cluster map (YAML: racks -> nodes; see docs/comm.md)");
  app.add_option("--backend", o.backend, "mpi or nccl")->capture_default_str();
  app.add_option("--json", o.json, "Write plumb.comm/1 JSON here when the sweep ends (- for standard output); "
                 "the rows go to FILE.partial as they are measured");
  app.add_option("--csv", o.csv, "Write CSV here when the sweep ends (- for standard output); the rows go to "
                 "FILE.partial as they are measured");
  app.add_flag("-q,--quiet", o.quiet, "No console table");
}

comm::SweepOptions to_sweep_options(const CommOptions& o) {
  comm::SweepOptions s;
  std::vector<std::string> problems;
  collect(problems, [&] { s.min_bytes = parse_bytes(o.min_bytes, "--min-bytes"); });
  collect(problems, [&] { s.max_bytes = parse_bytes(o.max_bytes, "--max-bytes"); });
  collect(problems, [&] {
    if (o.step_bytes.empty()) return;
    s.step_bytes = parse_bytes(o.step_bytes, "--step-bytes");
    if (s.step_bytes == 0) {
      throw Error("--step-bytes must be 1 or more (or left out to multiply by --step-factor), got 0");
    }
  });
  collect(problems, [&] { s.type = comm::parse_data_type(o.dtype); });
  collect(problems, [&] { s.op = comm::parse_reduce_op(o.op); });
  collect(problems, [&] {
    for (const std::string& name : split_list(o.collectives)) {
      s.collectives.push_back(&comm::find_collective(name));
    }
  });
  collect(problems, [&] {
    s.layers = split_list(o.layers);
    comm::make_layers(comm::Placement{}, s.layers);  // rejects unknown names
  });
  collect(problems, [&] { comm::find_backend(o.backend); });
  s.step_factor = o.step_factor;
  s.iters = o.iters;
  s.warmup = o.warmup;
  s.rounds = o.rounds;
  s.timeout_seconds = o.timeout_seconds;
  s.root = o.root;
  s.check = o.check != 0;
  if (problems.empty()) collect(problems, [&] { comm::validate(s); });
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return s;
}

comm::Result measure_comm(const CommOptions& o, const comm::SweepOptions& sweep,
                          comm::MpiCommunicator& control, const std::function<void()>& before,
                          bool show_progress, const StreamsFn& streams_of) {
  const bool leader = control.rank() == 0;
  Prepared p = prepare(o, sweep, control, before);
  comm::Result context = context_of(*p.world, p.placement, p.layers);
  std::vector<report::CommStreamReporter*> streams;
  if (leader) {
    fill_context(context, sweep, std::move(p.job));
    if (streams_of) streams = streams_of();
    for (report::CommStreamReporter* s : streams) s->begin(context);
  }
  std::unique_ptr<comm::Watchdog> watchdog;
  if (sweep.timeout_seconds > 0 && comm::MpiSession::threads()) {
    std::vector<std::string> hosts;
    for (const comm::RankPlace& r : p.placement.ranks) hosts.push_back(r.host);
    watchdog = std::make_unique<comm::Watchdog>(sweep.timeout_seconds, std::move(hosts));
  }
  Progress progress(stderr, leader && show_progress &&
                                (o.force_progress || Progress::is_terminal(stderr)));
  comm::Result result;
  try {
    result = comm::run_sweep(
        *p.world, p.placement, p.layers, sweep,
        [&](size_t done, size_t total, const std::string& what) {
          progress.update(done, total, what);
        },
        watchdog.get(),
        [&](const std::vector<comm::Row>& rows, int round) {
          if (!streams.empty()) progress.clear();  // the next update draws it again
          for (report::CommStreamReporter* s : streams) s->rows(rows, round);
        });
  } catch (const Error& e) {  // mid-measurement: other ranks may be blocked in a collective
    comm::abort_all(static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    comm::abort_all(static_cast<int>(ExitCode::kBadInput), e.what());
  }
  progress.clear();
  if (leader) copy_context(context, result);
  if (leader && sweep.timeout_seconds > 0 && !watchdog) {
    result.notes.push_back("this MPI library runs no second thread (no MPI_THREAD_MULTIPLE): "
                           "--timeout was not enforced");
  }
  return result;
}

int run_comm(const CommOptions& o) {
  const comm::SweepOptions sweep = to_sweep_options(o);  // the same on every rank
  comm::MpiSession mpi(nullptr, nullptr, threads_for(sweep));
  auto control = comm::MpiCommunicator::world();
  const bool leader = control->rank() == 0;
  try {
    std::unique_ptr<CommOutputs> outputs;
    const comm::Result result = measure_comm(
        o, sweep, *control, [&] { outputs = open_outputs(o); }, !o.quiet,
        [&] { return outputs->streams(); });
    int code = 0;
    comm::agree(*control, [&] {
      if (leader) code = write_reports(result, *outputs);
    });
    return control->broadcast_int(code, 0);
  } catch (const Error& e) {
    return comm::exit_agreed(*control, e);
  }
}

}  // namespace plumb::cli
