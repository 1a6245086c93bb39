#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>

#include "report/comm_reporter.h"

namespace plumb::report {
namespace {

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Unknown figures (NaN) are empty cells.
std::string csv_number(double value, int decimals) {
  return std::isnan(value) ? std::string() : fmt::format("{:.{}f}", value, decimals);
}

}  // namespace

std::string comm_csv_header() {
  return "layer,group,group_ranks,collective,dtype,op,root,requested_bytes,bytes,count,time_us,"
         "algbw_gbps,busbw_gbps,wrong,p50_us,p99_us,max_us,straggler_rank,straggler_share\n";
}

std::string comm_csv_row(const comm::Row& r) {
  // Times to the nanosecond, bandwidths to 0.1 MB/s: finer digits are noise.
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{},{},{},{},{:.3f}\n",
                     csv_field(r.layer), csv_field(r.group), r.group_ranks, r.collective, r.dtype,
                     r.op, r.root, r.requested_bytes, r.bytes, r.count, r.time_us, r.algbw_gbps,
                     r.busbw_gbps, r.wrong < 0 ? std::string() : std::to_string(r.wrong),
                     csv_number(r.p50_us, 3), csv_number(r.p99_us, 3), csv_number(r.max_us, 3),
                     r.straggler, r.straggler_share);
}

void CommCsvReporter::report(const comm::Result& result, std::ostream& out) const {
  out << comm_csv_header();
  for (const comm::Row& r : result.rows) out << comm_csv_row(r);
}

CommCsvStream::CommCsvStream(std::string option, std::string path)
    : file_(std::move(option), std::move(path)) {}

void CommCsvStream::begin(const comm::Result&) { file_.start(comm_csv_header()); }

void CommCsvStream::rows(const std::vector<comm::Row>& rows, int) {
  std::string text;
  for (const comm::Row& r : rows) text += comm_csv_row(r);
  file_.append(text);  // one write per size: a kill cuts between sizes, not inside a line
}

}  // namespace plumb::report
