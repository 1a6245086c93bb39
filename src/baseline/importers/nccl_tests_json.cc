// nccl-tests JSON output (`-J FILE` / `--output_file FILE`, 2.16 and later), written by
// src/util.cu in NVIDIA/nccl-tests (file "version" 1 to 3 seen). One run of one test binary is
// one object: "args" (argv, argv[0] names the binary and so the collective), "nccl_version"
// (NCCL's version code), "config" (the parameters and "devices", one entry per process with its
// first rank and hostname), "results" (one object per row: size, count, type, redop, root as a
// "%6i" string, and "out_of_place" / "in_place" objects with time or cpu_time, alg_bw, bus_bw,
// nwrong). Doubles are printed with "%lf", NaN as the string "nan", booleans as strings.
// As in the text importer, the out-of-place half of each row becomes a plumb row. Every field is
// checked: a malformed one is an Error naming its JSON path ("run.json: results[3].busbw: ...").
// What the file says about its own results is kept in the test's validity (validity.h): rows with
// wrong elements (`nwrong` of either half), `out_of_bounds` with a count or `"okay":"false"`,
// `average_bus_bandwidth` with `"okay":"false"`, a non-empty `errors` entry, and a file closed
// before its summary (no `out_of_bounds` or `average_bus_bandwidth`: the run stopped early and
// nccl-tests closed what was open).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

// The keys jsonOutputInit() and writeDeviceReport() always write; plumb's own JSON has none.
bool looks_like_nccl_tests(const json& doc) {
  return doc.is_object() && doc.contains("nccl_version") && doc.contains("args") &&
         doc.contains("config") && doc["config"].is_object() &&
         doc["config"].contains("nthreads");
}

// "nccl-tests, NCCL 2.27.3" from the version code: NCCL_VERSION(X,Y,Z) in nccl.h is
// X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
std::string tool_name(const json& code) {
  if (!code.is_number_unsigned()) return "nccl-tests";
  const uint64_t v = code.get<uint64_t>();
  const uint64_t major = v >= 10000 ? v / 10000 : v / 1000;
  const uint64_t minor = v >= 10000 ? v % 10000 / 100 : v % 1000 / 100;
  return fmt::format("nccl-tests, NCCL {}.{}.{}", major, minor, v % 100);
}

// "/opt/nccl-tests/build/all_reduce_perf" -> "all_reduce_perf"; empty when argv[0] is not named
// like an nccl-tests binary (<collective>_perf).
std::string binary_of(const std::string& program) {
  std::string name = program.substr(program.find_last_of('/') + 1);
  const size_t perf = name.find("_perf");
  if (perf == std::string::npos || perf == 0) return "";
  name.resize(perf + 5);
  return name;
}

class Reader : JsonFields {
 public:
  Reader(std::string_view file, const ImportOptions& options)
      : JsonFields(file), options_(options) {}

  ImportedTest read(const json& doc) const;

 private:
  int root(const json& row, const std::string& path) const;
  int ranks(const json& config, std::vector<std::string>& hosts) const;
  std::string collective(const json& args) const;
  std::string dtype(const json& entry, const std::string& path) const;
  comm::Row row(const json& entry, const std::string& path, const std::string& collective,
                int ranks) const;
  void check(const comm::Row& r, const std::string& path, const char* time_key) const;
  int64_t nwrong(const json& half, const std::string& path) const;
  void wrong_rows(const json& results, const ImportedTest& t, Validity& validity) const;
  void summary(const json& doc, Validity& validity) const;
  std::optional<Issue> incomplete(const json& doc, const ImportedTest& t) const;

  const ImportOptions& options_;
};

// "okay" is written as the string "true", "false" or (an unchecked bandwidth) "unchecked".
bool says_not_okay(const nlohmann::json& summary) {
  const auto okay = summary.find("okay");
  return okay != summary.end() && okay->is_string() && okay->get<std::string>() == "false";
}

// writeBenchmarkLinePreamble() writes the root as the "%6i" string it prints ("    -1").
int Reader::root(const json& entry, const std::string& path) const {
  const json& v = member(entry, path, "root");
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (v.is_number_integer() && v.get<int64_t>() >= -1 && v.get<int64_t>() <= kMax) {
    return static_cast<int>(v.get<int64_t>());
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const size_t start = s.find_first_not_of(' ');
    int r = 0;
    if (start != std::string::npos) {
      const auto [end, ec] = std::from_chars(s.data() + start, s.data() + s.size(), r);
      if (ec == std::errc() && end == s.data() + s.size() && r >= -1) return r;
    }
  }
  fail(path + ".root", "expected a rank number, got " + shown(v));
}

// Every process adds one entry (its first rank) and runs nthreads x ngpus ranks.
int Reader::ranks(const json& config, std::vector<std::string>& hosts) const {
  const json& devices = array(config, "config", "devices");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string path = fmt::format("config.devices[{}]", i);
    if (!devices[i].is_object()) fail(path, "expected an object, got " + shown(devices[i]));
    std::string host = text(devices[i], path, "hostname");
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
      hosts.push_back(std::move(host));
    }
  }
  if (options_.ranks > 0) return options_.ranks;
  constexpr uint64_t kMax = std::numeric_limits<int>::max();
  const uint64_t threads = std::min(whole(config, "config", "nthreads"), kMax);
  const uint64_t gpus = std::min(whole(config, "config", "ngpus"), kMax);
  const uint64_t per_process = threads * gpus;  // < 2^62: no overflow
  const uint64_t n = per_process > kMax ? per_process : devices.size() * per_process;
  if (n == 0 || n > kMax) {
    fail("config.devices", fmt::format("{} processes of {} ranks each: pass --ranks",
                                       devices.size(), per_process));
  }
  return static_cast<int>(n);
}

// From argv[0], which must name a collective plumb knows when it names an nccl-tests binary;
// --collective for a binary named otherwise.
std::string Reader::collective(const json& args) const {
  if (!args.is_array()) fail("args", "expected a list, got " + shown(args));
  std::string binary;
  if (!args.empty()) {
    if (!args[0].is_string()) fail("args[0]", "expected a string, got " + shown(args[0]));
    binary = binary_of(args[0].get<std::string>());
  }
  if (!binary.empty()) return known_collective(binary, file() + ": args[0]");
  if (!options_.collective.empty()) return options_.collective;
  fail("args[0]", fmt::format("{} is not an nccl-tests binary (<collective>_perf); pass "
                              "--collective",
                              args.empty() ? "missing" : shown(args[0])));
}

std::string Reader::dtype(const json& entry, const std::string& path) const {
  const std::string type = text(entry, path, "type");
  const auto name = plumb_dtype(type);
  if (!name) throw Error(unknown_dtype(fmt::format("{}: {}.type", file(), path), type));
  return *name;
}

// A row that cannot have been measured (table_helpers.h row_problem), named by its JSON path.
void Reader::check(const comm::Row& r, const std::string& path, const char* time_key) const {
  const auto problem = row_problem(r);
  if (!problem) return;
  const std::string half = path + ".out_of_place.";
  const std::string iter = path + ".out_of_place_per_iter.";
  const std::array<std::string, 8> kPaths = {path + ".size", path + ".count", half + time_key,
                                             half + "alg_bw", half + "bus_bw", iter + "p50_us",
                                             iter + "p99_us", iter + "max_us"};
  fail(kPaths[static_cast<size_t>(problem->field)], problem->what);
}

comm::Row Reader::row(const json& entry, const std::string& path, const std::string& collective,
                      int ranks) const {
  if (!entry.is_object()) fail(path, "expected an object, got " + shown(entry));
  const std::string half_path = path + ".out_of_place";
  const json& half = member(entry, path, "out_of_place");
  if (half.is_null()) {
    fail(half_path, "null: this row has only an in-place result, and plumb imports the "
                    "out-of-place half");
  }
  if (!half.is_object()) fail(half_path, "expected an object, got " + shown(half));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  comm::Row r;
  r.layer = "world";
  r.group = "world";
  r.group_ranks = ranks;
  r.collective = collective;
  r.dtype = dtype(entry, path);
  r.op = known_op(text(entry, path, "redop"), fmt::format("{}: {}.redop", file(), path));
  r.root = root(entry, path);
  r.bytes = r.requested_bytes = whole(entry, path, "size");
  r.count = whole(entry, path, "count");
  // -C reports the CPU time under "cpu_time" instead of "time".
  const char* time_key = half.contains("cpu_time") && !half.contains("time") ? "cpu_time" : "time";
  r.time_us = number(half, half_path, time_key);
  r.algbw_gbps = number(half, half_path, "alg_bw");
  r.busbw_gbps = number(half, half_path, "bus_bw");
  r.wrong = nwrong(half, half_path);
  r.p50_us = r.p99_us = r.max_us = nan;
  if (entry.contains("out_of_place_per_iter")) {  // -I: per-iteration times
    const std::string iter_path = path + ".out_of_place_per_iter";
    const json& iter = object(entry, path, "out_of_place_per_iter");
    r.p50_us = number(iter, iter_path, "p50_us");
    r.p99_us = number(iter, iter_path, "p99_us");
    r.max_us = number(iter, iter_path, "max_us");
  }
  r.straggler = -1;
  check(r, path, time_key);
  return r;
}

// null when not checked (-c 0): -1.
int64_t Reader::nwrong(const json& half, const std::string& path) const {
  const json& wrong = member(half, path, "nwrong");
  if (wrong.is_null()) return -1;
  const double w = number(half, path, "nwrong");
  // Written with "%lf" from an int64_t: whole, and below 2^63.
  if (w < 0 || w != std::floor(w) || w >= 9.2e18) {
    fail(path + ".nwrong", "expected a count, got " + shown(wrong));
  }
  return static_cast<int64_t>(w);
}

// Rows whose out-of-place or in-place half counted wrong elements.
void Reader::wrong_rows(const json& results, const ImportedTest& t, Validity& validity) const {
  for (const char* half : {"out_of_place", "in_place"}) {
    WrongRows wrong(fmt::format("have wrong elements in the {} half",
                                std::string_view(half) == "in_place" ? "in-place" : "out-of-place"));
    for (size_t i = 0; i < results.size(); ++i) {
      const json& h = results[i].contains(half) ? results[i][half] : json();
      if (!h.is_object()) continue;  // out_of_place was checked; a null in_place is not run
      const std::string path = fmt::format("results[{}].{}", i, half);
      const int64_t n = nwrong(h, path);
      if (n > 0) {
        wrong.add(fmt::format("{}: {}.nwrong", file(), path), t.rows[i].requested_bytes, n,
                  fmt::format("nwrong {}", n));
      }
    }
    wrong.add_issue_to(validity, t.rows.size());
  }
}

// writeResultFooter() and writeErrors(): the out-of-bounds count, the bandwidth check, NCCL's
// last error.
void Reader::summary(const json& doc, Validity& validity) const {
  if (doc.contains("out_of_bounds")) {
    const json& bounds = object(doc, "", "out_of_bounds");
    const uint64_t count = whole(bounds, "out_of_bounds", "count");
    if (count > 0 || says_not_okay(bounds)) {
      validity.push_back({IssueKind::kWrongResults, file() + ": out_of_bounds",
                          fmt::format("nccl-tests counted {} out-of-bounds value{} (okay {})",
                                      count, count == 1 ? "" : "s", shown(bounds.value("okay", json()))),
                          0, 0, {}, 0});
    }
  }
  if (doc.contains("average_bus_bandwidth")) {
    const json& bw = object(doc, "", "average_bus_bandwidth");
    if (says_not_okay(bw)) {
      validity.push_back({IssueKind::kFailedCheck, file() + ": average_bus_bandwidth",
                          fmt::format("nccl-tests says the average bus bandwidth, {} GB/s, is "
                                      "below the one it was asked to check (okay \"false\")",
                                      shown(bw.value("bandwidth", json()))),
                          0, 0, {}, 0});
    }
  }
  if (!doc.contains("errors")) return;
  const json& errors = array(doc, "", "errors");
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i].is_string()) fail(fmt::format("errors[{}]", i), "expected a string, got " + shown(errors[i]));
    const std::string& error = errors[i].get_ref<const std::string&>();
    if (error.empty()) continue;
    validity.push_back({IssueKind::kFailedCheck, fmt::format("{}: errors[{}]", file(), i),
                        fmt::format("NCCL reported '{}'", quoted_line(error)), 0, 0, {}, 0});
  }
}

// "config": {"minimum_bytes", "maximum_bytes", "step_factor" | "step_bytes"}; an unknown plan
// when one is missing.
SweepPlan plan_of(const nlohmann::json& config) {
  SweepPlan plan;
  const auto size = [&](const char* key) -> uint64_t {
    const auto it = config.find(key);
    return it != config.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
  };
  plan.min_bytes = size("minimum_bytes");
  plan.max_bytes = size("maximum_bytes");
  plan.factor = static_cast<double>(size("step_factor"));
  plan.step_bytes = size("step_bytes");
  return plan;
}

// A file without the summary nccl-tests writes after the last size: the run stopped, and
// jsonOutputFinalize() closed what was open. (With the summary, fewer rows than config asks for
// are no sign: nccl-tests lowers maximum_bytes to fit memory after writing config.)
std::optional<Issue> Reader::incomplete(const json& doc, const ImportedTest& t) const {
  std::vector<std::string> missing;
  for (const char* key : {"out_of_bounds", "average_bus_bandwidth"}) {
    if (!doc.contains(key)) missing.push_back(fmt::format("'{}'", key));
  }
  if (missing.empty()) return std::nullopt;
  const SweepPlan plan = plan_of(doc["config"]);
  // Rows of one (type, op, root) sweep the sizes once; the last sweep is the one that stopped.
  uint64_t measured = 0;
  for (auto r = t.rows.rbegin(); r != t.rows.rend(); ++r) {
    if (r->dtype != t.rows.back().dtype || r->op != t.rows.back().op ||
        r->root != t.rows.back().root) {
      break;
    }
    ++measured;
  }
  return incomplete_sweep(file() + ": results",
                          fmt::format("no {} after the results (the run stopped before its "
                                      "summary)",
                                      join(missing, " or ")),
                          plan, measured, t.rows.back().requested_bytes);
}

ImportedTest Reader::read(const json& doc) const {
  ImportedTest t;
  t.tool = tool_name(doc.contains("nccl_version") ? doc["nccl_version"] : json());
  t.line = 1;
  const json& args = member(doc, "", "args");
  const std::string name = collective(args);
  for (const json& a : args) {
    if (!a.is_string()) fail("args", "expected strings, got " + shown(a));
    t.command += (t.command.empty() ? "" : " ") + a.get<std::string>();
  }
  t.ranks = ranks(object(doc, "", "config"), t.hosts);
  const auto results = doc.find("results");
  if (results == doc.end()) fail("results", "missing (the run stopped before its first row)");
  if (!results->is_array()) fail("results", "expected a list, got " + shown(*results));
  if (results->empty()) fail("results", "no result rows");
  t.rows.reserve(results->size());
  ProblemList problems;  // every bad result of the file, in one pass
  for (size_t i = 0; i < results->size(); ++i) {
    problems.attempt([&] {
      t.rows.push_back(row((*results)[i], fmt::format("results[{}]", i), name, t.ranks));
    });
  }
  problems.throw_if_any();
  wrong_rows(*results, t, t.validity);
  summary(doc, t.validity);
  if (auto issue = incomplete(doc, t)) t.validity.push_back(std::move(*issue));
  std::stable_sort(t.validity.begin(), t.validity.end(),
                   [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
  return t;
}

json document(std::string_view text) {
  text = without_bom(text);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return json(json::value_t::discarded);
  std::string problem;
  return parse_json_or_discarded(text, problem);
}

class NcclTestsJson final : public Importer {
 public:
  std::string_view name() const override { return "nccl-json"; }

  bool detect(std::string_view text) const override {
    const json doc = document(text);
    return !doc.is_discarded() && looks_like_nccl_tests(doc);
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    if (const std::optional<std::string> deep = json_too_deep(text)) {
      throw Error(fmt::format("{}: {}", file, *deep));
    }
    const json doc = document(text);
    if (doc.is_discarded()) {
      throw Error(fmt::format("{}: not a JSON object (nccl-tests -J writes one; a run that was "
                              "killed leaves it unfinished)",
                              file));
    }
    if (!looks_like_nccl_tests(doc)) {
      throw Error(fmt::format("{}: a JSON object without the keys nccl-tests -J writes (args, "
                              "nccl_version, config)",
                              file));
    }
    return {Reader(file, options).read(doc)};
  }
};

}  // namespace

const Importer& nccl_tests_json_importer() {
  static const NcclTestsJson kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
