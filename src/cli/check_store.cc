#include "cli/check_store.h"

#include "baseline/store.h"
#include "report/check_reporter.h"

namespace plumb::cli {
namespace {

std::string store_at(const std::string& db) { return baseline::store_location(db); }

std::vector<std::string> failing(const check::NodeReport& report) {
  std::vector<std::string> names;
  for (const check::CheckResult& c : report.checks) {
    if (!c.skipped && (c.status == check::Status::kWarning || c.status == check::Status::kCritical)) {
      names.push_back(c.name);
    }
  }
  return names;
}

}  // namespace

int64_t store_check_report(const check::NodeReport& report, const std::string& kind,
                           const std::string& db) {
  baseline::Store store(store_at(db));
  baseline::CheckEntry entry;
  entry.created = report.created;
  entry.host = report.host;
  entry.kind = kind;
  entry.status = std::string(check::status_name(report.status()));
  entry.failing = failing(report);
  entry.record = report::check_json(report);
  return store.save_check(entry);
}

std::vector<check::Offender> offenders_in(const std::string& db, const std::string& host, int k, int n) {
  baseline::Store store(store_at(db), baseline::StoreMode::kReadOnly);
  const std::vector<baseline::CheckEntry> passes = store.recent_checks(n, host, "node");
  return check::repeat_offenders(passes, k, n);
}

}  // namespace plumb::cli
