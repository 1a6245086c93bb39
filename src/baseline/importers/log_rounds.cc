#include "baseline/importers/log_rounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "comm/rounds.h"
#include "common/error.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

// What one row measured; comm::combine_rounds merges rows by (layer, group, collective, size).
using RoundRowKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, uint64_t>;

RoundRowKey key_of(const comm::Row& r) {
  return {r.layer, r.group, r.collective, r.dtype, r.op, r.requested_bytes};
}

std::string key_text(const RoundRowKey& k) {
  return fmt::format("{} {} {} {}", std::get<2>(k), std::get<3>(k), std::get<4>(k),
                     format_bytes(std::get<5>(k)));
}

constexpr const char* kWhy = "several logs make one record only of the same test";

// The keys of a test, each once.
std::set<RoundRowKey> keys_of(const ImportedTest& t, const std::string& file) {
  std::set<RoundRowKey> keys;
  std::set<std::tuple<std::string, std::string, std::string, uint64_t>> merged;
  for (const comm::Row& r : t.rows) {
    if (!keys.insert(key_of(r)).second ||
        !merged.emplace(r.layer, r.group, r.collective, r.requested_bytes).second) {
      throw Error(fmt::format("{}:{}: {} {} appears more than once in the test (several types or "
                              "reductions in one run, -d all / -o all): {}, with one row per size",
                              file, t.line, r.collective, format_bytes(r.requested_bytes), kWhy));
    }
  }
  return keys;
}

// Test `t` of `file` against the first file's.
void check_same_test(const ImportedTest& first, const std::string& first_file,
                     const ImportedTest& t, const std::string& file) {
  const std::string here = fmt::format("{}:{}", file, t.line);
  const std::string there = fmt::format("{}:{}", first_file, first.line);
  if (t.ranks != first.ranks) {
    throw Error(fmt::format("{}: {} ranks where {} has {}: {}", here, t.ranks, there, first.ranks,
                            kWhy));
  }
  const std::set<RoundRowKey> a = keys_of(first, first_file);
  const std::set<RoundRowKey> b = keys_of(t, file);
  for (const RoundRowKey& k : a) {
    if (b.count(k) == 0) {
      throw Error(fmt::format("{}: no {} row, which {} has: {}", here, key_text(k), there, kWhy));
    }
  }
  for (const RoundRowKey& k : b) {
    if (a.count(k) == 0) {
      throw Error(fmt::format("{}: {} is not in {}: {}", here, key_text(k), there, kWhy));
    }
  }
}

}  // namespace

std::vector<ImportedTest> combine_logs(const std::vector<std::string>& files,
                                       std::vector<std::vector<ImportedTest>> tests) {
  for (size_t i = 1; i < files.size(); ++i) {
    if (tests[i].size() != tests[0].size()) {
      throw Error(fmt::format("{}: {} test(s) where {} has {}: {}", files[i], tests[i].size(),
                              files[0], tests[0].size(), kWhy));
    }
  }
  std::vector<ImportedTest> combined;
  for (size_t k = 0; k < tests[0].size(); ++k) {
    ImportedTest out = std::move(tests[0][k]);
    keys_of(out, files[0]);
    std::vector<comm::Row> all = out.rows;
    for (size_t i = 1; i < files.size(); ++i) {
      const ImportedTest& t = tests[i][k];
      check_same_test(out, files[0], t, files[i]);
      all.insert(all.end(), t.rows.begin(), t.rows.end());
      out.validity.insert(out.validity.end(), t.validity.begin(), t.validity.end());
    }
    out.rows = comm::combine_rounds(all);
    std::stable_sort(out.validity.begin(), out.validity.end(),
                     [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
    combined.push_back(std::move(out));
  }
  return combined;
}

}  // namespace plumb::baseline
