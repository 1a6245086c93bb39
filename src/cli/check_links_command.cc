// plumb check links (docs/check.md): the slow node or link across N ranks. Runs under the
// launchers plumb comm runs under (mpirun, srun), one rank per accelerator.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>
#include <optional>

#include "check/links_measure.h"
#include "check/links_report.h"
#include "check/links_schedule.h"
#include "cli/check_subcommands.h"
#include "cli/comm_command.h"
#include "comm/agreement.h"
#include "comm/backends.h"
#include "comm/cluster_map.h"
#include "comm/mpi_backend.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/units.h"

namespace plumb::cli {
namespace {

// Shifts of the shift pattern when --shifts is not given: three rails' worth of partners.
constexpr int kDefaultShiftCount = 3;
// A pair's message: large enough to reach a link's bandwidth on every fabric plumb comm measures
// (NCCL's busbw flattens above a few MiB on NVLink and IB; docs/comm.md), small enough that
// log2(N) rounds take seconds.
constexpr const char* kLinksDefaultBytes = "1M";

struct LinksOptions {
  std::string pattern = "bisection";
  std::vector<int> shifts;
  std::string bytes = kLinksDefaultBytes;
  int iters = 20;
  int warmup = 3;
  int repeat = 3;
  check::LinkThresholds thresholds{0.8, 3.0, 0.0};
  std::string cluster;
  std::string backend = "mpi";
  std::string json;
  bool quiet = false;
};

check::LinkMeasureOptions measure_options(const LinksOptions& o) {
  check::LinkMeasureOptions m;
  m.bytes = parse_bytes(o.bytes, "--bytes");
  if (m.bytes == 0) throw Error("--bytes must be 1 or more, got 0");
  m.iters = o.iters;
  m.warmup = o.warmup;
  m.repeat = o.repeat;
  return m;
}

struct Setup {
  comm::Placement placement;
  std::vector<check::LinkRound> rounds;
  std::optional<OutputFile> json;
};

std::vector<check::LinkRound> schedule(const LinksOptions& o, const comm::Placement& placement) {
  const int ranks = static_cast<int>(placement.ranks.size());
  if (o.pattern == "bisection") return check::bisection_schedule(ranks);
  const std::vector<int> shifts =
      !o.shifts.empty() ? o.shifts
                        : check::default_shifts(ranks, check::uniform_ranks_per_node(placement),
                                                kDefaultShiftCount);
  return check::shift_schedule(ranks, shifts);
}

// Everything before the measurement, agreed by every rank: the output file (rank 0), the map,
// the placement and the schedule.
void prepare(const LinksOptions& o, comm::MpiCommunicator& control, Setup& s) {
  std::optional<comm::ClusterMap> map;
  comm::agree(control, [&] {
    if (control.rank() == 0 && !o.json.empty()) s.json.emplace("--json", o.json);
    if (!o.cluster.empty()) map = comm::load_cluster_map(o.cluster);
  });
  const std::vector<std::string> hosts = control.all_gather_strings(host_name());
  const std::vector<std::string> ids = control.all_gather_strings(std::to_string(control.node_id()));
  comm::agree(control, [&] {
    if (control.size() < 2) {
      throw Error("plumb check links needs 2 ranks or more: start it under an MPI launcher, e.g. "
                  "mpirun -np 8 plumb check links");
    }
    std::vector<int> node_ids;
    for (const std::string& id : ids) node_ids.push_back(std::stoi(id));
    s.placement = map ? comm::place_by_map(*map, hosts) : comm::place_by_host(hosts, node_ids);
    s.rounds = schedule(o, s.placement);
  });
}

check::LinksReport make_report(const LinksOptions& o, const check::LinkMeasureOptions& m,
                               const Setup& s, std::string_view backend,
                               std::vector<check::PairResult> pairs) {
  check::LinksReport r;
  r.created = utc_timestamp();
  r.backend = std::string(backend);
  for (const comm::RankPlace& place : s.placement.ranks) r.hosts.push_back(place.host);
  r.pattern = o.pattern;
  r.measure = m;
  r.thresholds = o.thresholds;
  r.rounds = s.rounds;
  r.analysis = check::analyze_links(std::move(pairs), o.thresholds);
  return r;
}

int write_outputs(const LinksOptions& o, const check::LinksReport& r, Setup& s) {
  std::ostream& console = o.json == "-" ? std::cerr : std::cout;
  if (!o.quiet) check::print_links_console(r, console);
  if (s.json) {
    s.json->stream() << check::links_json(r).dump(2) << "\n";
    s.json->commit();
  }
  return check::exit_code(check::links_status(r.analysis));
}

std::vector<check::PairResult> measure(const LinksOptions& o, const check::LinkMeasureOptions& m,
                                       const Setup& s, comm::Communicator& world) {
  Progress progress(stderr, world.rank() == 0 && !o.quiet && Progress::is_terminal(stderr));
  try {
    auto pairs = check::measure_links(world, s.placement, s.rounds, m,
                                      [&](size_t done, size_t total, const std::string& what) {
                                        progress.update(done, total, "round " + what);
                                      });
    progress.clear();
    return pairs;
  } catch (const std::exception& e) {  // mid-measurement: the partners may be blocked
    comm::abort_all(static_cast<int>(kCheckCouldNotRun), e.what());
  }
}

int run_links(const LinksOptions& o) {
  check::check_pattern(o.pattern);
  const check::LinkMeasureOptions m = measure_options(o);
  comm::find_backend(o.backend);
  comm::MpiSession mpi(nullptr, nullptr);
  auto control = comm::MpiCommunicator::world();
  try {
    Setup s;
    prepare(o, *control, s);
    std::unique_ptr<comm::Communicator> world = comm::find_backend(o.backend).make(comm::MpiCommunicator::world());
    std::vector<check::PairResult> pairs = measure(o, m, s, *world);
    int code = 0;
    comm::agree(*control, [&] {
      if (control->rank() == 0) code = write_outputs(o, make_report(o, m, s, world->backend(), std::move(pairs)), s);
    });
    return control->broadcast_int(code, 0);
  } catch (const Error& e) {
    return comm::exit_agreed(*control, Error(e.what(), kCheckCouldNotRun));
  }
}

}  // namespace

void setup_check_links(CLI::App& check, std::function<int()>& selected) {
  auto o = std::make_shared<LinksOptions>();
  CLI::App* sub = check.add_subcommand(
      "links", "Find the slow node or link across the ranks (run under mpirun or srun): pairs in "
               "rounds, each pair against its layer's median; exit 0 none, 1 a slow link, 2 a "
               "slow node, 3 could not run");
  sub->add_option("--pattern", o->pattern,
                  "bisection: log2(N) rounds of hypercube partners (rank XOR 2^k); shift: pairs "
                  "{r, r+s} for a few shifts s (rail-aligned when every node has the same ranks)")
      ->capture_default_str();
  sub->add_option("--shifts", o->shifts,
                  "The shifts of --pattern shift (comma-separated; default: 1, 2, 3 times the "
                  "ranks per node)")
      ->delimiter(',');
  sub->add_option("--bytes", o->bytes, "Bytes each partner sends per operation (K/M/G suffixes)")
      ->capture_default_str();
  sub->add_option("-n,--iters", o->iters, "Timed operations per measurement")
      ->capture_default_str()->check(whole_number(1, comm::kMaxIters));
  sub->add_option("-w,--warmup", o->warmup, "Untimed operations before each measurement")
      ->capture_default_str()->check(whole_number(0, comm::kMaxIters));
  sub->add_option("--repeat", o->repeat, "Measurements per pair; the pair keeps their median")
      ->capture_default_str()->check(whole_number(1, comm::kMaxRounds));
  sub->add_option("--threshold", o->thresholds.busbw_ratio,
                  "A pair is slow below this share of its layer's median busbw")
      ->capture_default_str()->check(CLI::Range(0.01, 1.0));
  sub->add_option("--mad-factor", o->thresholds.mad_factor,
                  "... and more than this many scaled MADs (1.4826·MAD) below the median")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  sub->add_option("--p99-threshold", o->thresholds.p99_ratio,
                  "A pair is also slow when its p99 exceeds this multiple of its layer's median "
                  "p99 (0: p99 not judged)")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  sub->add_option("--cluster", o->cluster,
                  "Cluster map (YAML: racks -> nodes; docs/comm.md): gives the layers rail and spine");
  sub->add_option("--backend", o->backend, "mpi or nccl")->capture_default_str();
  sub->add_option("--json", o->json, "Write plumb.check-links/1 here (- for standard output)");
  sub->add_flag("-q,--quiet", o->quiet, "No console table");
  sub->callback([o, &selected] { selected = [o] { return run_links(*o); }; });
}

}  // namespace plumb::cli
