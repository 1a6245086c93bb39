// plumb check burn-in (docs/check.md, "Burn-in"): the deeper pass before a job, under
// mpirun with one rank per accelerator of the node.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>
#include <optional>

#include "check/burn_in.h"
#include "check/check_file.h"
#include "cli/check_store.h"
#include "cli/check_subcommands.h"
#include "cli/comm_command.h"
#include "cli/record_source.h"
#include "cli/store_option.h"
#include "comm/agreement.h"
#include "comm/backends.h"
#include "comm/collective.h"
#include "comm/mpi_backend.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/units.h"
#include "report/check_reporter.h"

namespace plumb::cli {
namespace {

// Azure's aznhc judges an 8×H100 node's NCCL all-reduce at 8 GiB-scale messages; on the CPU
// backend a message that large takes minutes, so the default is the size where plumb comm's
// summary counts busbw (1 MiB and above, docs/comm.md) times 64.
constexpr const char* kBurnInDefaultBytes = "64M";

struct BurnInOptions {
  std::string config;
  // Unset: the check file's burn_in section, else the default.
  std::optional<std::string> collective;
  std::optional<std::string> bytes;
  std::optional<double> busbw_gbps;
  std::string baseline;
  std::optional<double> baseline_share;
  bool store = false;
  std::string db;
  int iters = 20;
  int warmup = 5;
  std::string h2d_bytes = "256M";
  std::optional<double> h2d_gbps;
  std::string backend = "mpi";
  std::string json;
  bool quiet = false;
};

// The baseline's row for the same collective, size and rank count on layer world.
void read_baseline(const BurnInOptions& o, int ranks, check::BurnInJudgement& j) {
  if (o.baseline.empty()) return;
  const baseline::Record record = load_comm_record(o.baseline, o.db, "give a plumb comm baseline");
  j.baseline_name = describe_record(record);
  for (const comm::Row& row : record.rows) {
    if (row.layer == "world" && row.collective == j.collective && row.requested_bytes == j.bytes &&
        row.group_ranks == ranks) {
      j.baseline_row = row;
    }
  }
}

constexpr double kDefaultBaselineShare = 0.9;
constexpr NumberRange kGbpsRange{0, 1e6};
constexpr NumberRange kShareRange{0.01, 1.0};

// An option given on the command line, else the check file's burn_in value, else `fallback`.
std::string text_of(const std::optional<std::string>& option, const check::CheckSection& section,
                    std::string_view key, std::string fallback) {
  return option ? *option : section.text(key).value_or(std::move(fallback));
}
double number_of(const std::optional<double>& option, const check::CheckSection& section,
                 std::string_view key, const NumberRange& range, double fallback) {
  return option ? *option : section.number(key, range).value_or(fallback);
}

check::BurnInRun make_run(const BurnInOptions& o) {
  const check::CheckFile file = o.config.empty() ? check::CheckFile{} : check::load_check_file(o.config);
  const check::CheckSection& b = file.burn_in;
  check::BurnInRun run;
  run.judgement.collective = std::string(
      comm::find_collective(text_of(o.collective, b, "collective", "allreduce"), "--collective").name());
  run.judgement.bytes = parse_bytes(text_of(o.bytes, b, "bytes", kBurnInDefaultBytes), "--bytes");
  if (run.judgement.bytes == 0) throw Error("--bytes must be 1 or more, got 0");
  run.judgement.busbw_gbps = number_of(o.busbw_gbps, b, "busbw_gbps", kGbpsRange, 0);
  run.judgement.baseline_share =
      number_of(o.baseline_share, b, "baseline_share", kShareRange, kDefaultBaselineShare);
  run.iters = o.iters;
  run.warmup = o.warmup;
  run.h2d_bytes = parse_bytes(o.h2d_bytes, "--h2d-bytes");
  run.h2d_min_gbps = number_of(o.h2d_gbps, b, "h2d_gbps", kGbpsRange, 0);
  run.host = host_name();
  run.created = utc_timestamp();
  return run;
}

int write_outputs(const BurnInOptions& o, const check::NodeReport& report,
                  std::optional<OutputFile>& json) {
  if (json) {
    json->stream() << report::check_json(report).dump(2) << "\n";
    json->commit();
  }
  std::ostream& console = o.json == "-" ? std::cerr : std::cout;
  if (o.store) {
    fmt::print(console, "plumb check: stored as check record {}\n",
               store_check_report(report, "burn-in", o.db));
  }
  if (o.quiet) {
    fmt::print(console, "{}\n", report::check_summary_line(report));
  } else {
    report::print_check_console(report, console);
  }
  return check::exit_code(report.status());
}

int run_burn_in(const BurnInOptions& o) {
  check::BurnInRun run = make_run(o);
  comm::find_backend(o.backend);
  comm::MpiSession mpi(nullptr, nullptr);
  auto control = comm::MpiCommunicator::world();
  try {
    std::optional<OutputFile> json;
    comm::agree(*control, [&] {
      if (control->rank() != 0) return;
      if (!o.json.empty()) json.emplace("--json", o.json);
      read_baseline(o, control->size(), run.judgement);
    });
    run.device = control->local_rank();
    std::unique_ptr<comm::Communicator> world = comm::find_backend(o.backend).make(comm::MpiCommunicator::world());
    check::NodeReport report;
    try {
      report = check::run_burn_in(*world, run);
    } catch (const std::exception& e) {  // mid-measurement: the other ranks may be blocked
      comm::abort_all(static_cast<int>(kCheckCouldNotRun), e.what());
    }
    int code = 0;
    comm::agree(*control, [&] {
      if (control->rank() == 0) code = write_outputs(o, report, json);
    });
    return control->broadcast_int(code, 0);
  } catch (const Error& e) {
    return comm::exit_agreed(*control, Error(e.what(), kCheckCouldNotRun));
  }
}

}  // namespace

void setup_check_burn_in(CLI::App& check, std::function<int()>& selected) {
  auto o = std::make_shared<BurnInOptions>();
  CLI::App* sub = check.add_subcommand(
      "burn-in", "The deeper pass before a job (under mpirun, one rank per accelerator): the node's "
                 "collective sweep against a busbw threshold and a stored baseline, host<->device "
                 "bandwidth; exit 0 ok, 1 warning, 2 critical, 3 unknown");
  sub->add_option("--config", o->config,
                  "A check file: its burn_in section gives the defaults of the options below");
  sub->add_option("--collective", o->collective, "The collective to judge (default allreduce)");
  sub->add_option("--bytes", o->bytes, "Its message size (K/M/G suffixes; default 64M)");
  sub->add_option("--busbw-gbps", o->busbw_gbps,
                  "Critical below this busbw, in GB/s (aznhc: 460 for all-reduce on 8x H100 SXM); "
                  "0 (default): recorded, not judged")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--baseline", o->baseline,
                  "A stored baseline id, latest, or a plumb comm --json file: warning below "
                  "--baseline-share of its busbw for the same collective, size and ranks");
  sub->add_option("--baseline-share", o->baseline_share,
                  "The share of the baseline's busbw to reach (default 0.9)")
      ->check(CLI::Range(0.01, 1.0));
  sub->add_option("--db", o->db, kStoreOptionHelp);
  sub->add_flag("--store", o->store, "Keep the result in the store as a check record (plumb list)");
  sub->add_option("-n,--iters", o->iters, "Timed iterations")
      ->capture_default_str()->check(whole_number(1, comm::kMaxIters));
  sub->add_option("-w,--warmup", o->warmup, "Untimed iterations first")
      ->capture_default_str()->check(whole_number(0, comm::kMaxIters));
  sub->add_option("--h2d-bytes", o->h2d_bytes, "Host<->device copy size (CUDA runtime, dlopen)")
      ->capture_default_str();
  sub->add_option("--h2d-gbps", o->h2d_gbps,
                  "Warning below this copy bandwidth each way; 0 (default): recorded")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--backend", o->backend, "mpi or nccl")->capture_default_str();
  sub->add_option("--json", o->json, "Write plumb.check/1 here (- for standard output)");
  sub->add_flag("-q,--quiet", o->quiet, "Print only the verdict line");
  sub->callback([o, &selected] { selected = [o] { return run_burn_in(*o); }; });
}

}  // namespace plumb::cli
