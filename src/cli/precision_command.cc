#include "cli/precision_command.h"

#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/number_option.h"
#include "common/output_file.h"
#include "common/strings.h"
#include "precision/dtype.h"
#include "precision/readers.h"
#include "precision/verdict.h"
#include "report/precision_reporter.h"

namespace plumb::cli {
namespace {

constexpr NumberRange kCosine{-1, 1};
constexpr NumberRange kError{0, 1e9};  // an error or tolerance; beyond, every pair passes anyway
constexpr NumberRange kUlp{0, 1e15, false, true};
constexpr NumberRange kThreads{0, 1024, false, true};
constexpr int kLastDType = static_cast<int>(precision::DType::kComplex128);

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (int d = 0; d <= kLastDType; ++d) {
    names.emplace_back(precision::dtype_name(static_cast<precision::DType>(d)));
  }
  return names;
}

std::optional<precision::DType> dtype_option(const std::string& text,
                                             std::vector<std::string>& problems) {
  if (text.empty()) return std::nullopt;
  if (auto d = precision::dtype_from_name(text)) return d;
  const std::vector<std::string> names = dtype_names();
  problems.push_back(unknown_name("--dtype", "element type", text, names));
  return std::nullopt;
}

// "1024,4096", "1024x4096" or "[1024, 4096]": whole numbers, one per dimension.
std::optional<std::vector<int64_t>> shape_option(const std::string& text,
                                                 std::vector<std::string>& problems) {
  if (text.empty()) return std::nullopt;
  std::string_view list = text;
  if (list.size() >= 2 && list.front() == '[' && list.back() == ']') list = list.substr(1, list.size() - 2);
  std::vector<int64_t> shape;
  for (size_t start = 0, end = 0; end != std::string_view::npos; start = end + 1) {
    end = list.find_first_of(",x", start);
    const std::string_view item = trim_blanks(list.substr(start, end - start));
    int64_t v = -1;
    const auto [stop, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || stop != item.data() + item.size() || v < 0) {
      problems.push_back(fmt::format("--shape '{}': expected whole numbers separated by commas, "
                                     "e.g. 1024,4096",
                                     text));
      return std::nullopt;
    }
    shape.push_back(v);
  }
  return shape;
}

// A threshold of the other rule is a mistake, not a setting to ignore.
void check_rule_flags(const PrecisionOptions& o, std::vector<std::string>& problems) {
  const bool msprobe = o.rule == "msprobe";
  const struct {
    const char* flag;
    bool given;
    bool for_msprobe;
  } flags[] = {{"--cosine", o.cosine.has_value(), true},
               {"--max-abs", o.max_abs.has_value(), true},
               {"--cosine-fail", o.cosine_fail.has_value(), true},
               {"--max-abs-fail", o.max_abs_fail.has_value(), true},
               {"--rtol", o.rtol.has_value(), false},
               {"--atol", o.atol.has_value(), false}};
  for (const auto& f : flags) {
    if (f.given && f.for_msprobe != msprobe) {
      problems.push_back(fmt::format("{}: a threshold of --rule {}; this comparison uses --rule {}",
                                     f.flag, f.for_msprobe ? "msprobe" : "assert-close", o.rule));
    }
  }
}

std::vector<NamedPath> inputs_of(const PrecisionOptions& o) {
  if (o.mode == PrecisionMode::kStats) return {{"FILE", o.file}};
  return {{"A", o.a}, {"B", o.b}};
}

struct PrecisionOutputs {
  std::optional<OutputFile> json, csv, html;
};

// Created before the work, so that a path that cannot be written fails at once.
std::unique_ptr<PrecisionOutputs> open_outputs(const PrecisionOptions& o) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}, {"--csv", o.csv}, {"--html", o.html}};
  refuse_overlapping_paths(outputs, inputs_of(o));
  auto out = std::make_unique<PrecisionOutputs>();
  if (!o.json.empty()) out->json.emplace("--json", o.json);
  if (!o.csv.empty()) out->csv.emplace("--csv", o.csv);
  if (!o.html.empty()) out->html.emplace("--html", o.html);
  return out;
}

// With an output on standard output, the table goes to standard error.
std::ostream& console(const PrecisionOptions& o) {
  const bool stdout_taken = o.json == "-" || o.csv == "-" || o.html == "-";
  return stdout_taken ? std::cerr : std::cout;
}

int run_compare(const PrecisionOptions& o) {
  const precision::CompareOptions options = compare_options(o);
  auto out = open_outputs(o);
  const precision::CompareResult result = precision::compare(o.a, o.b, options);
  if (out->json) {
    report::PrecisionJsonReporter().report(result, out->json->stream());
    out->json->commit();
  }
  if (out->csv) {
    report::PrecisionCsvReporter().report(result, out->csv->stream());
    out->csv->commit();
  }
  if (out->html) {
    report::write_precision_html(result, {options.thresholds}, out->html->stream());
    out->html->commit();
  }
  report::PrecisionConsoleReporter({o.first_divergence}).report(result, console(o));
  return static_cast<int>(result.failed() > 0 ? ExitCode::kCheckFailed : ExitCode::kOk);
}

precision::ReadOptions read_options(const PrecisionOptions& o) {
  std::vector<std::string> problems;
  precision::ReadOptions read;
  read.raw_dtype = dtype_option(o.dtype, problems);
  read.raw_shape = shape_option(o.shape, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return read;
}

int run_stats(const PrecisionOptions& o) {
  const precision::ReadOptions read = read_options(o);
  auto out = open_outputs(o);
  report::StatsReport r{o.file, {}};
  for (const precision::Tensor& t : precision::read_tensors(o.file, read)) {
    r.tensors.push_back({t.name, std::string(precision::dtype_name(t.dtype)), t.shape,
                         precision::tensor_stats(t)});
  }
  if (out->json) {
    out->json->stream() << report::precision_stats_json(r).dump(
                              2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                       << "\n";
    out->json->commit();
  }
  report::print_precision_stats(r, console(o));
  return 0;
}

void add_read_options(CLI::App* c, PrecisionOptions& o) {
  c->add_option("--dtype", o.dtype,
                "Element type of raw .bin files (float32, float16, bfloat16, int8, ...)");
  c->add_option("--shape", o.shape, "Shape of raw .bin files, e.g. 1024,4096 (default: 1-D)");
}

void add_threshold_options(CLI::App* c, PrecisionOptions& o) {
  c->add_option("--cosine", o.cosine,
                "msprobe rule: a cosine below this fails together with --max-abs (default 0.99)")
      ->transform(number_option(kCosine));
  c->add_option("--max-abs", o.max_abs,
                "msprobe rule: a max abs error above this fails together with --cosine (default "
                "0.001)")
      ->transform(number_option(kError));
  c->add_option("--cosine-fail", o.cosine_fail,
                "msprobe rule: a cosine below this fails alone (default 0.9)")
      ->transform(number_option(kCosine));
  c->add_option("--max-abs-fail", o.max_abs_fail,
                "msprobe rule: a max abs error above this fails alone (default 1)")
      ->transform(number_option(kError));
  c->add_option("--stats-rel", o.stats_rel,
                "Statistics mode: an L2 norm relative difference above this fails (default 0.5)")
      ->transform(number_option(kError));
  c->add_option("--rtol", o.rtol,
                "assert-close rule: relative tolerance (default: torch's for the dtype)")
      ->transform(number_option(kError));
  c->add_option("--atol", o.atol,
                "assert-close rule: absolute tolerance (default: torch's for the dtype)")
      ->transform(number_option(kError));
  c->add_option("--ulp", o.ulp, "Count the elements more than N ULP apart (default 1)")
      ->transform(number_option(kUlp));
}

void setup_compare(CLI::App& app, PrecisionOptions& o) {
  CLI::App* c = app.add_subcommand(
      "compare", "Compare two tensor files, two directories or two msprobe dumps, pair by pair");
  c->add_option("A", o.a, "Under test (msprobe's NPU side): a tensor file, a directory or a dump")
      ->required();
  c->add_option("B", o.b, "The reference (msprobe's Bench side), of the same kind as A")
      ->required();
  c->add_option("--rule", o.rule, "Pass or fail: msprobe (cosine and max abs error) or "
                                  "assert-close (torch.testing.assert_close's rtol/atol)")
      ->capture_default_str();
  add_threshold_options(c, o);
  c->add_flag("--first-divergence", o.first_divergence,
              "List the first API calls whose inputs pass and outputs fail (dumps)");
  c->add_flag("--statistics", o.statistics,
              "Dumps: compare the max/min/mean/L2 norm summaries even where tensors were dumped");
  add_read_options(c, o);
  c->add_option("--json", o.json, "Write plumb.precision/1 here (- for standard output)");
  c->add_option("--csv", o.csv, "Write msprobe's compare result columns here (- for standard output)");
  c->add_option("--html", o.html, "Write a self-contained HTML report here");
  c->add_option("--threads", o.threads, "Pairs compared at once (default 0: one per core)")
      ->capture_default_str()
      ->transform(number_option(kThreads));
  c->callback([&o] { o.mode = PrecisionMode::kCompare; });
}

void setup_stats(CLI::App& app, PrecisionOptions& o) {
  CLI::App* s = app.add_subcommand(
      "stats", "Each tensor of a file: shape, dtype, min/max/mean/std, NaN and Inf counts");
  s->add_option("FILE", o.file, "A .npy, .pt, .safetensors or raw .bin file")->required();
  add_read_options(s, o);
  s->add_option("--json", o.json, "Write plumb.precision-stats/1 here (- for standard output)");
  s->callback([&o] { o.mode = PrecisionMode::kStats; });
}

}  // namespace

precision::CompareOptions compare_options(const PrecisionOptions& o) {
  std::vector<std::string> problems;
  precision::CompareOptions c;
  try {
    c.rule = std::string(precision::rule_named(o.rule).name);
    check_rule_flags(o, problems);
  } catch (const Error& e) {
    problems.push_back(std::string("--rule: ") + e.what());
  }
  precision::Thresholds& t = c.thresholds;
  t.cosine_pass = o.cosine.value_or(t.cosine_pass);
  t.abs_with_cosine = o.max_abs.value_or(t.abs_with_cosine);
  t.cosine_fail = o.cosine_fail.value_or(t.cosine_fail);
  t.max_abs_fail = o.max_abs_fail.value_or(t.max_abs_fail);
  t.stats_rel_fail = o.stats_rel.value_or(t.stats_rel_fail);
  c.metrics.rtol = o.rtol;
  c.metrics.atol = o.atol;
  c.metrics.ulp_threshold = o.ulp.value_or(c.metrics.ulp_threshold);
  c.read.raw_dtype = dtype_option(o.dtype, problems);
  c.read.raw_shape = shape_option(o.shape, problems);
  c.statistics = o.statistics;
  c.threads = o.threads;
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return c;
}

void setup_precision(CLI::App& app, PrecisionOptions& o) {
  app.require_subcommand(1);
  setup_compare(app, o);
  setup_stats(app, o);
}

int run_precision(const PrecisionOptions& o) {
  switch (o.mode) {
    case PrecisionMode::kCompare: return run_compare(o);
    case PrecisionMode::kStats: return run_stats(o);
    case PrecisionMode::kNone: break;
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace plumb::cli
