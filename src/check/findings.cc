#include "check/findings.h"

#include <algorithm>

namespace plumb::check {
namespace {

int rank(Status s) {
  switch (s) {
    case Status::kCritical: return 0;
    case Status::kWarning: return 1;
    case Status::kUnknown: return 2;
    case Status::kOk: return 3;
  }
  return 3;
}

}  // namespace

CheckResult fold_findings(std::vector<Finding> findings, CheckResult healthy) {
  if (findings.empty()) return healthy;
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return rank(a.status) < rank(b.status); });
  CheckResult r;
  r.status = findings.front().status;
  r.expected = findings.front().expected;
  r.detail = findings.front().detail;
  for (const Finding& f : findings) r.value += (r.value.empty() ? "" : "; ") + f.value;
  return r;
}

}  // namespace plumb::check
