#include "cli/topo_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include "comm/agreement.h"
#include "comm/mpi_backend.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/topo_reporter.h"
#include "topo/collect.h"

namespace plumb::cli {
namespace {

// The JSON output, opened before anything is probed so that a bad path fails at once.
struct Output {
  std::optional<OutputFile> file;
};

void open_output(const TopoOptions& o, Output& out) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}};
  const std::vector<NamedPath> inputs = {{"--xml", o.xml}};
  refuse_overlapping_paths(outputs, inputs);
  if (!o.json.empty()) out.file.emplace("--json", o.json);
}

void write_reports(const topo::TopoRecord& record, const TopoOptions& o, Output& out) {
  if (!o.quiet) report::TopoConsoleReporter().report(record, o.json == "-" ? std::cerr : std::cout);
  if (!out.file) return;
  report::TopoJsonReporter().report(record, out.file->stream());
  out.file->commit();
  if (!out.file->is_stdout()) fmt::print(std::cerr, "plumb: wrote {}\n", o.json);
}

topo::TopoRecord read_xml(const std::string& path) {
  try {
    return topo::collect_from_xml(path);
  } catch (const Error& e) {
    throw Error(fmt::format("--xml {}", e.what()), e.code());
  }
}

// This process alone, or another machine's export (read by the launcher's rank 0 only).
int run_alone(const TopoOptions& o) {
  if (launcher_rank() != 0) return 0;
  Output out;
  open_output(o, out);
  const topo::TopoRecord record =
      o.xml.empty() ? topo::collect_local(topo::probe_topology()) : read_xml(o.xml);
  write_reports(record, o, out);
  return 0;
}

// Every rank of the job: rank 0 opens the output, all are probed, rank 0 reports.
int run_ranks(const TopoOptions& o) {
  comm::MpiSession mpi(nullptr, nullptr);
  auto control = comm::MpiCommunicator::world();
  const bool leader = control->rank() == 0;
  Output out;
  try {
    comm::agree(*control, [&] {
      if (leader) open_output(o, out);
    });
    const topo::TopoRecord record = topo::collect_over_mpi(control->handle());
    comm::agree(*control, [&] {
      if (leader) write_reports(record, o, out);
    });
    return 0;
  } catch (const Error& e) {  // agreed by every rank: rank 0 speaks, the others wait for it
    if (leader) {
      fmt::print(std::cerr, "plumb: error: {}\n", e.what());
      std::fflush(stderr);
    }
    control->barrier();
    return static_cast<int>(e.code());
  }
}

}  // namespace

void setup_topo(CLI::App& app, TopoOptions& o) {
  app.add_option("--json", o.json, "Write plumb.topo/1 JSON here (- for standard output)");
  app.add_option("--xml", o.xml,
                 "Read this hwloc XML export (lstopo --of xml) instead of this machine");
  app.add_flag("-q,--quiet", o.quiet, "No console tree");
  setup_topo_site(app, o);
}

int run_topo(const TopoOptions& o) {
  if (o.mode == TopoMode::kImport) return run_topo_import(o.import);
  if (o.mode == TopoMode::kExport) return run_topo_export(o.export_);
  if (!o.xml.empty() || !started_by_mpi_launcher()) return run_alone(o);
  return run_ranks(o);
}

}  // namespace plumb::cli
