// The active comm probe (--probe-interval S): runs a small collective sweep between jobs — by
// default this plumb binary's `comm` — reads the plumb.comm/1 JSON it prints and exports the
// busbw of each (layer, collective, size) with source="probe" (docs/train-events.md, "Probe"). A
// row no measurement can be (a busbw above value_bounds.h's bound, a layer plumb comm does not
// know) is refused, counted in plumb_exporter_source_malformed_total and logged.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "baseline/store.h"
#include "exporter/malformed_log.h"
#include "exporter/source.h"

namespace plumb::exporter {

struct ProbeSourceOptions {
  std::string host;
  std::string command;  // a shell command line printing plumb.comm/1 JSON on standard output
  double interval_seconds = 0;
  double timeout_seconds = 120;
  std::function<void(const std::string&)> log;  // refused rows; default: standard error
  std::function<double()> now;                  // seconds; default: the steady clock
};

// What runs when --probe-command is not given: `<plumb> comm` over allreduce and allgather from
// 1 MiB to 64 MiB, its JSON on standard output and no console table.
std::string default_probe_command(const std::string& plumb_binary);

// The busbw family of a comm record's rows. Rows of one (layer, collective, bytes) measured in
// several groups (each node of a node layer) give the lowest busbw: the group a job would wait
// for.
Families probe_families(const std::string& host, const std::vector<comm::Row>& rows);

// The rows a probe may export, and one message for each row refused, naming it by its place in
// the JSON's results: "probe: results[3] (allreduce, 1048576 bytes, layer world): a busbw of ...".
struct ProbeRows {
  std::vector<comm::Row> kept;
  std::vector<std::string> refused;
};
ProbeRows checked_probe_rows(const std::vector<comm::Row>& rows);

class ProbeSource : public Source {
 public:
  explicit ProbeSource(ProbeSourceOptions options);
  std::string name() const override { return "probe"; }
  double interval_seconds() const override { return options_.interval_seconds; }
  Families collect() override;

 private:
  ProbeSourceOptions options_;
  MalformedLog malformed_;
};

}  // namespace plumb::exporter
