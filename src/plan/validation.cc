#include "plan/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <numeric>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"
#include "plan/cluster.h"
#include "plan/step.h"

namespace plumb::plan {
namespace {

// Both sets train GPT models as Megatron-LM builds them (Narayanan et al. 2021, Section 5).
constexpr int64_t kGptVocab = 51200;

struct CsvRow {
  int line = 0;
  std::vector<double> values;
};

// Numeric rows of a CSV whose comment lines start with '#' and whose first other line is the
// header. Each row must have `columns` numbers.
std::vector<CsvRow> read_csv(const std::string& path, size_t columns) {
  std::istringstream in(read_text_file(path, "validation set"));
  std::vector<CsvRow> rows;
  std::string text;
  bool header = true;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const std::vector<std::string> cells = split_list(text);
    CsvRow row{line, {}};
    for (const std::string& cell : cells) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str() || *end != '\0' || !std::isfinite(v)) {
        throw Error(fmt::format("{}:{}: '{}' is not a finite number", path, line, cell));
      }
      row.values.push_back(v);
    }
    if (row.values.size() != columns) {
      throw Error(fmt::format("{}:{}: expected {} columns, got {}", path, line, columns,
                              row.values.size()));
    }
    rows.push_back(row);
  }
  return rows;
}

ModelSpec gpt(int layers, int64_t hidden, int heads, int64_t seq_len) {
  ModelSpec m;
  m.name = fmt::format("gpt-{}x{}", layers, hidden);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = kGptVocab;
  m.seq_len = seq_len;
  m.tied_embeddings = true;
  return m;
}

std::vector<double> ranks(std::span<const double> v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  return r;
}

std::string group_name(double params_b) { return fmt::format("{}B", params_b); }

}  // namespace

double spearman(std::span<const double> a, std::span<const double> b) {
  const std::vector<double> ra = ranks(a);
  const std::vector<double> rb = ranks(b);
  const double n = static_cast<double>(ra.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

std::string vendor_of(const HardwareSpec& hw) {
  std::string word = hw.name.substr(0, hw.name.find(' '));
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return word;
}

void describe_run(ValidationRow& row, const ModelSpec& m, const HardwareSpec& hw,
                  const Prediction& p) {
  row.moe = m.moe.has_value();
  row.vendor = vendor_of(hw);
  row.devices = p.layout.devices();
  row.overhead_share = overhead_share(p);
}

std::vector<ValidationSet> by_split(const ValidationSet& set) {
  const bool any_check = std::any_of(set.rows.begin(), set.rows.end(),
                                     [](const ValidationRow& r) { return r.split == "check"; });
  if (!any_check) return {set};
  std::vector<ValidationSet> out;
  for (const char* split : {"build", "check"}) {
    ValidationSet part = set;
    part.name = fmt::format("{} · {}", set.name, split);
    part.rows.clear();
    for (const ValidationRow& r : set.rows) {
      if (r.split == split) part.rows.push_back(r);
    }
    if (part.rows.empty()) continue;
    summarize(part);
    out.push_back(std::move(part));
  }
  return out;
}

void summarize(ValidationSet& set) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  double sum = 0;
  set.max_abs_error = 0;
  for (const ValidationRow& row : set.rows) {
    sum += std::abs(row.error());
    set.max_abs_error = std::max(set.max_abs_error, std::abs(row.error()));
    if (row.group.empty()) continue;  // a run of a set that ranks it with no other
    groups[row.group].first.push_back(row.predicted);
    groups[row.group].second.push_back(row.published);
  }
  set.mape = set.rows.empty() ? 0 : sum / static_cast<double>(set.rows.size());
  set.spearman.clear();
  for (const auto& [group, values] : groups) {
    if (values.first.size() >= 3) set.spearman[group] = spearman(values.first, values.second);
  }
}

// Columns: params_b, heads, hidden, layers, tp, pp, gpus, global_batch, tflops_per_gpu, ...
// Full recomputation, micro-batch 1, no FlashAttention (2021), the paper's FLOP count.
ValidationSet validate_megatron_sc21(const std::string& csv, const HardwareSpec& a100) {
  ValidationSet set{"megatron-sc21", "Narayanan et al. 2021 (SC21), Table 1", "TFLOP/s per GPU", {}, 0, 0, {}};
  const Network net(default_cluster(a100), Algorithm::kAuto);
  const ComputeModel compute = compute_model(a100);
  for (const CsvRow& r : read_csv(csv, 11)) {
    const auto& v = r.values;
    const ModelSpec m = gpt(static_cast<int>(v[3]), static_cast<int64_t>(v[2]), static_cast<int>(v[1]), 2048);
    Layout p;
    p.tp = static_cast<int>(v[4]);
    p.pp = static_cast<int>(v[5]);
    p.dp = static_cast<int>(v[6]) / (p.tp * p.pp);
    p.global_batch = static_cast<int64_t>(v[7]);
    p.recompute = Recompute::kFull;
    p.flash_attention = false;
    const Prediction pred = Predictor(m, a100, net, "bf16", compute)(p);
    set.rows.push_back({group_name(v[0]), fmt::format("tp {} pp {} dp {}", p.tp, p.pp, p.dp),
                        pred.hardware_tflops_per_device, v[8]});
    describe_run(set.rows.back(), m, a100, pred);
  }
  summarize(set);
  return set;
}

// Columns: params_b, gpus, global batch, micro batch, hidden, heads, layers, seq, tp, dp, pp, ms.
// Megatron-DeepSpeed with full recomputation (with selective, 13 rows do not fit in 80 GB),
// ZeRO-1 as its GPT examples configure (vTrain does not say; it changes only how the DP
// reduction is split, not its volume), no FlashAttention (docs/plan.md, "Validation").
ValidationSet validate_vtrain(const std::string& csv, const HardwareSpec& a100) {
  ValidationSet set{"vtrain", "Bang et al. 2024 (vTrain, MICRO'24), ground_truth_multi.csv",
                    "iteration time (ms)", {}, 0, 0, {}};
  const Network net(default_cluster(a100), Algorithm::kAuto);
  const ComputeModel compute = compute_model(a100);
  for (const CsvRow& r : read_csv(csv, 12)) {
    const auto& v = r.values;
    const ModelSpec m = gpt(static_cast<int>(v[6]), static_cast<int64_t>(v[4]), static_cast<int>(v[5]),
                            static_cast<int64_t>(v[7]));
    Layout p;
    p.tp = static_cast<int>(v[8]);
    p.dp = static_cast<int>(v[9]);
    p.pp = static_cast<int>(v[10]);
    p.micro_batch = static_cast<int64_t>(v[3]);
    p.global_batch = static_cast<int64_t>(v[2]);
    p.recompute = Recompute::kFull;
    p.zero = 1;
    p.flash_attention = false;
    const Prediction pred = Predictor(m, a100, net, "bf16", compute)(p);
    set.rows.push_back({group_name(v[0]),
                        fmt::format("tp {} pp {} dp {} mbs {}", p.tp, p.pp, p.dp, p.micro_batch),
                        pred.step_time_s * 1e3, v[11]});
    describe_run(set.rows.back(), m, a100, pred);
    set.rows.back().time_quantity = true;
  }
  summarize(set);
  return set;
}

}  // namespace plumb::plan
