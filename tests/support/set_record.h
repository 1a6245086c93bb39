// Baseline sets (issue 29, item 4) built from real inputs for the tests of plumb list, show and
// report: topology from the dgx-like fixture (hwloc XML, four ranks, two bound badly), a comm part
// of two allreduce sizes, the step part of step_record.h, a memory part computed by
// mem::memory_baseline from the train-events lines below, a recovery part of two failures, and
// the serving part of serve_record.h.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <string>

#include "baseline/record_kind.h"
#include "baseline/store.h"
#include "common/units.h"
#include "mem/memory_baseline.h"
#include "mem/train_memory.h"
#include "report/memory_baseline_reporter.h"
#include "report/topo_reporter.h"
#include "supervise/recovery_json.h"
#include "support/serve_record.h"
#include "support/step_record.h"
#include "topo/binding.h"
#include "topo/cpu_list.h"
#include "topo/topology.h"

namespace plumb::test {

inline nlohmann::json set_topology() {
  topo::TopoRecord r;
  r.created = "2026-12-02T10:00:00Z";
  r.hosts.push_back(topo::load_topology_xml(std::string(PLUMB_TEST_FIXTURES) +
                                            "/topo/dgx-like-2numa.xml"));
  r.hosts[0].source = "dgx-like-2numa.xml";  // independent of where the checkout is
  const topo::Topology& t = r.hosts[0];
  const auto cpus = [](const char* list) { return topo::parse_cpu_list(list, "test"); };
  r.ranks = {topo::make_binding(t, 0, 0, cpus("0-15,32-47"), {{"LOCAL_RANK", "0"}}),
             topo::make_binding(t, 1, 1, cpus("0-63"), {{"LOCAL_RANK", "5"}})};
  for (const topo::RankBinding& b : r.ranks) {
    if (auto w = topo::check_binding(t, b)) r.warnings.push_back(*w);
  }
  return report::topo_json(r);
}

// Two ranks of plumb.train-events/1 lines, 8 steps: rank 0 flat at 4 GiB, rank 1 leaking
// `leak_mib` MiB per step from 4 GiB; a checkpoint saved before step 5 and loaded before step 6
// (the example of tests/report/memory_baseline_reporter_test.cc, whose figures it checks).
inline std::string train_events(int leak_mib) {
  const double level = 4.0 * kGiB;
  std::string text;
  for (int step = 1; step <= 8; ++step) {
    const std::string mark = step == 5 ? R"(,"checkpoint":"saved")"
                             : step == 6 ? R"(,"checkpoint":"loaded")" : "";
    for (int rank = 0; rank < 2; ++rank) {
      const double allocated = level + rank * step * leak_mib * kMiB;
      text += fmt::format(R"({{"schema":"plumb.train-events/1","step":{},"step_seconds":1,)"
                          R"("rank":"{}","memory":{{"allocated_bytes":{:.0f},)"
                          R"("reserved_bytes":{:.0f}}}{}}})",
                          step, rank, allocated, allocated + kGiB, mark) + "\n";
    }
  }
  return text;
}

inline mem::MemoryBaseline set_memory_baseline(int leak_mib = 8) {
  return mem::memory_baseline(mem::parse_memory_series(train_events(leak_mib), "events.jsonl"), 0);
}

// A crash recovered from its checkpoint, then a hang recovered after a link check.
inline supervise::RecoveryBaseline set_recovery() {
  supervise::RecoveryBaseline b;
  b.command = {"python3", "train.py"};
  b.host = "gpu-001";
  b.started = "2026-12-03T10:00:00Z";
  b.wall_seconds = 600;
  b.attempts = 3;
  b.result = "finished";
  b.drill = true;
  b.faults_injected = 2;
  b.failures_by_kind = {{"signal", 1}, {"hang", 1}};
  supervise::Recovery kill;
  kill.attempt = 1;
  kill.kind = "signal";
  kill.detail = "killed by signal 9";
  kill.detect_seconds = 0.25;
  kill.steps = {{"clear-cache", 1.5, true, ""}};
  kill.backoff_seconds = 2;
  kill.restart_to_first_step_seconds = 6.5;
  kill.downtime_seconds = 10.25;
  kill.last_step = 12;
  kill.checkpoint_step = 10;
  kill.first_step_after = 11;
  kill.steps_lost = 2;
  kill.resumed_after_checkpoint = true;
  supervise::Recovery hang = kill;
  hang.attempt = 2;
  hang.kind = "hang";
  hang.detail = "no progress for 30 s";
  hang.detect_seconds = 30.5;
  hang.downtime_seconds = 40.5;
  hang.steps_lost = 4;
  b.recoveries = {kill, hang};
  return b;
}

inline std::vector<comm::Row> set_rows(double busbw) {
  std::vector<comm::Row> rows;
  for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{1} << 24}) {
    comm::Row row;
    row.layer = row.group = "world";
    row.group_ranks = 2;
    row.collective = "allreduce";
    row.dtype = "float32";
    row.op = "sum";
    row.requested_bytes = row.bytes = bytes;
    row.count = bytes / 4;
    row.algbw_gbps = busbw;  // allreduce on 2 ranks: busbw = algbw × 2(n−1)/n = algbw
    row.busbw_gbps = busbw;
    row.time_us = static_cast<double>(bytes) / (row.algbw_gbps * 1e3);
    row.p50_us = row.time_us;
    row.p99_us = row.time_us * 1.5;
    row.max_us = row.time_us * 2;
    row.wrong = 0;
    rows.push_back(row);
  }
  return rows;
}

// A comm record of two hosts (nccl, 16 ranks) with set_rows(busbw), from `source`.
inline baseline::Record comm_record(const std::string& label, double busbw,
                                    const std::string& source = "plumb baseline") {
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001", "gpu-002"};
  r.source = source;
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"nccl", "2.18.3"}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "nccl"}, {"ranks", 16}};
  r.rows = set_rows(busbw);
  return r;
}

// All seven parts. `leak_mib`: rank 1's leak per step; `busbw`: the comm rows' bus bandwidth.
inline baseline::Record full_set(const std::string& label = "clean", int leak_mib = 8,
                                 double busbw = 2.5) {
  baseline::Record r;
  r.created = "2026-12-03T12:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = baseline::kSetSource;
  r.topo = set_topology();
  r.env = {{"schema", "plumb.env/1"},
           {"versions", {{"torch", "1.13.1"}, {"gloo", nullptr}}},
           {"env", {{"GLOO_SOCKET_IFNAME", "lo"}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 2}};
  r.rows = set_rows(busbw);
  r.step = step_only_record().step;
  r.memory = report::memory_baseline_json(set_memory_baseline(leak_mib));
  r.recovery = supervise::recovery_to_json(set_recovery());
  r.serve = serve_part();
  return r;
}

// The same set whose recovery drill could not be taken, taken without --serve-url.
inline baseline::Record set_without_recovery(const std::string& label = "no-drill") {
  baseline::Record r = full_set(label);
  r.recovery = nullptr;
  r.serve = nullptr;
  r.missing = {{"recovery", "--skip recovery: the drill was not run"},
               {"serve", "not asked for: no --serve-url"}};
  return r;
}

}  // namespace plumb::test
