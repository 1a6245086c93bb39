#include "plan/validation_set.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "common/yaml_strict.h"
#include "plan/catalog.h"
#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/layout_names.h"
#include "plan/model.h"
#include "plan/network.h"
#include "plan/step.h"

namespace plumb::plan {
namespace {

using Problems = std::vector<std::string>;

const std::vector<std::string> kSetKeys = {"set", "title", "targets", "runs"};
const std::vector<std::string> kTargetKeys = {"mape", "max_error"};
const std::vector<std::string> kRunKeys = {
    "name",    "group",     "source",   "model",    "model_file", "hardware",  "hardware_file",
    "cluster", "precision", "devices",  "layout",   "measured",   "published", "assumed",
    "split"};
// A run's split (docs/plan.md section 10): the rules are shaped on build rows and judged on check
// rows, which no rule was changed for.
const std::map<std::string, std::string> kSplits = {{"build", "build"}, {"check", "check"}};
// The run's own keys that are fields: each is published or assumed. (name, group and source
// describe the row; layout, measured and cluster are fields key by key.)
const std::vector<std::string> kRunFields = {"model",     "model_file", "hardware",
                                             "hardware_file", "precision", "devices"};
// plumb plan's layout options, without the dashes, '-' as '_' (src/cli/plan_command.cc).
const std::vector<std::string> kLayoutKeys = {
    "tp",   "pp",  "dp",        "ep",       "etp",        "cp",         "vpp",
    "zero", "mbs", "gbs",       "recompute", "schedule",  "ep_overlap", "shared_expert_overlap",
    "tp_overlap",               "dispatch_precision",     "flash_attention",       "seq_len",
    "capacity_factor",          "einsum_dispatch",        "cp_algo",
    "dispatcher",               "fp32_grad_reduce",       "fsdp",                  "train_metrics",
    "fp32_combine",             "eager",                  "grad_accum_fusion"};
const std::vector<std::string> kMeasuredKeys = {"tokens_per_s_per_device", "step_time_s",
                                                "tflops_per_device", "mfu", "flops_per_token"};

// The bounds of plumb plan's options (src/cli/plan_command.cc; docs/plan.md, "Number options").
constexpr NumberRange kDeviceCount{1, static_cast<double>(kMaxDevices), false, true};
constexpr NumberRange kMicroBatch{1, 1e6, false, true};
constexpr NumberRange kGlobalBatch{1, 1e9, false, true};  // sequences per step
constexpr NumberRange kZeroStage{0, 3, false, true};
constexpr NumberRange kCapacityFactor{0, 100};  // 0: dropless; GShard and DeepSpeed use 1–2
// A sequence length as a model file accepts one (model.cc, kMaxSize).
constexpr NumberRange kSeqLen{1, 1e9, false, true};
// A target is a fraction of the published figure.
constexpr NumberRange kTarget{0, 1, true};
// Measured figures: far beyond any run (an H100 trains a 1B model at ~5e4 tokens/s), they catch
// a mistyped exponent.
constexpr NumberRange kTokensPerS{0, 1e9, true};      // per device
constexpr NumberRange kStepTimeS{0, 1e7, true};       // 116 days
constexpr NumberRange kTflops{0, 1e6, true};          // 1 EFLOP/s per device
constexpr NumberRange kMfu{0, 1, true};
constexpr NumberRange kFlopsPerToken{0, 1e18, true};  // 6 × kMaxParameters, and attention

double tokens_per_s_per_device(const Prediction& p) {
  return p.tokens_per_s / static_cast<double>(p.layout.devices());
}

// A measured quantity: the prediction's figure for it, and for the FLOP-based ones how a
// published figure becomes tokens/s per device with the source's own FLOPs per token.
struct Quantity {
  const char* key;
  const char* label;
  NumberRange range;
  double (*predicted)(const Prediction& p);
  double (*tokens_per_s)(double value, double flops_per_token, double peak_flops);  // or null
};

const Quantity kQuantities[] = {
    {"tokens_per_s_per_device", "tokens/s per device", kTokensPerS, tokens_per_s_per_device,
     nullptr},
    {"step_time_s", "step time (s)", kStepTimeS,
     [](const Prediction& p) { return p.step_time_s; }, nullptr},
    // Model FLOP/s per device = tokens/s per device × FLOPs per token.
    {"tflops_per_device", "model TFLOP/s per device", kTflops,
     [](const Prediction& p) { return p.tflops_per_device; },
     [](double tflops, double flops_per_token, double) { return tflops * 1e12 / flops_per_token; }},
    // MFU = tokens/s per device × FLOPs per token / peak (Chowdhery et al. 2022, PaLM, App. B).
    {"mfu", "MFU", kMfu, [](const Prediction& p) { return p.mfu; },
     [](double mfu, double flops_per_token, double peak) { return mfu * peak / flops_per_token; }},
};

std::vector<std::string> quantity_keys() {
  std::vector<std::string> keys;
  for (const Quantity& q : kQuantities) keys.push_back(q.key);
  return keys;
}

// One run as read: everything a prediction needs, and what the row reports.
struct Run {
  std::string name, group, source;
  std::string split = "build";
  ModelSpec model;
  HardwareSpec hardware;
  ClusterSpec cluster;
  std::string precision = "bf16";
  Layout layout;
  const Quantity* quantity = nullptr;
  double measured = 0;
  std::optional<double> flops_per_token;
  std::vector<std::pair<std::string, std::string>> assumed;
};

std::string resolve(const std::string& dir, const std::string& file) {
  const std::filesystem::path p(file);
  return p.is_absolute() || dir.empty() ? file : (std::filesystem::path(dir) / p).string();
}

// "tp 1 pp 16 dp 128 ep 64 mbs 1 gbs 15360": the parallel sizes beyond 1 and the batch.
std::string row_layout(const Layout& p) {
  std::string s = fmt::format("tp {} pp {} dp {}", p.tp, p.pp, p.dp);
  if (p.cp > 1) s += fmt::format(" cp {}", p.cp);
  if (p.ep > 1) s += fmt::format(" ep {}", p.ep);
  if (p.etp > 0) s += fmt::format(" etp {}", p.etp);
  if (p.vpp > 1) s += fmt::format(" vpp {}", p.vpp);
  return s + fmt::format(" mbs {} gbs {}", p.micro_batch, p.global_batch);
}

// Reads one entry of `runs`, adding each problem (file:line: text) to `problems`.
class RunReader {
 public:
  RunReader(const YAML::Node& run, const std::string& path, const std::string& dir,
            std::map<std::string, int>& names, Problems& problems)
      : run_(run), path_(path), dir_(dir), names_(names), problems_(problems),
        first_problem_(problems.size()) {}

  std::optional<Run> read() {
    if (!run_.IsMap()) {
      report(run_, "a run must be a map: name, model, hardware, devices, layout, measured, "
                   "published, assumed");
      return std::nullopt;
    }
    check_keys(run_, kRunKeys, "a run");
    record_fields(run_, kRunFields, "");
    Run r;
    read_labels(r);
    const bool model = read_model(r);
    const bool hardware = read_hardware(r);
    if (hardware) read_run_cluster(r);
    read_precision(r, hardware);
    const std::optional<double> devices = number(run_, "devices", kDeviceCount);
    if (!run_["devices"]) report(run_, fmt::format("run '{}' needs 'devices'", r.name));
    read_layout(r, model, devices);
    read_measured(r);
    check_marks(r);
    if (problems_.size() > first_problem_) return std::nullopt;
    return r;
  }

 private:
  void report(const YAML::Node& at, const std::string& text) {
    problems_.push_back(fmt::format("{}:{}: {}", path_, yaml_line(at), text));
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& known,
                  std::string_view where) {
    for (const YamlProblem& p : key_problems(map, known, where)) {
      problems_.push_back(fmt::format("{}:{}: {}", path_, p.line, p.message));
    }
  }

  // The keys of `map` that are fields (known, first of their name), as `prefix` + key.
  void record_fields(const YAML::Node& map, const std::vector<std::string>& known,
                     const std::string& prefix) {
    for (const auto& item : map) {
      if (!item.first.IsScalar()) continue;
      const std::string& key = item.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) continue;
      const std::string field = prefix + key;
      const bool seen = std::any_of(fields_.begin(), fields_.end(),
                                    [&](const auto& f) { return f.first == field; });
      if (!seen) fields_.emplace_back(field, yaml_line(item.first));
    }
  }

  std::optional<double> number(const YAML::Node& map, const std::string& key,
                               const NumberRange& range) {
    const YAML::Node value = map[key];
    if (!value) return std::nullopt;
    std::string problem;
    if (auto v = yaml_number(value, range, problem)) return v;
    report(value, fmt::format("'{}' {}", key, problem));
    return std::nullopt;
  }

  std::optional<std::string> text(const YAML::Node& map, const std::string& key) {
    const YAML::Node value = map[key];
    if (!value) return std::nullopt;
    if (value.IsScalar()) return value.Scalar();
    report(value, fmt::format("'{}' must be a string", key));
    return std::nullopt;
  }

  template <class T>
  std::optional<T> choice(const YAML::Node& map, const std::string& key,
                          const std::map<std::string, T>& table, std::string_view noun) {
    const std::optional<std::string> word = text(map, key);
    if (!word) return std::nullopt;
    if (auto it = table.find(*word); it != table.end()) return it->second;
    std::vector<std::string> names;
    for (const auto& [name, value] : table) names.push_back(name);
    report(map[key], unknown_name(fmt::format("'{}'", key), noun, shorten(*word), names, *word));
    return std::nullopt;
  }

  std::optional<bool> flag(const YAML::Node& map, const std::string& key) {
    const YAML::Node value = map[key];
    if (!value) return std::nullopt;
    bool b = false;
    if (value.IsScalar() && YAML::convert<bool>::decode(value, b)) return b;
    report(value, fmt::format("'{}' must be true or false, got '{}'", key,
                              value.IsScalar() ? shorten(value.Scalar()) : "a list or map"));
    return std::nullopt;
  }

  void read_labels(Run& r) {
    const std::optional<std::string> name = text(run_, "name");
    if (!run_["name"]) report(run_, "a run needs a 'name', unique within the set");
    if (name) {
      r.name = terminal_safe(*name);
      const auto [first, fresh] = names_.emplace(r.name, yaml_line(run_["name"]));
      if (!fresh) {
        report(run_["name"], fmt::format("run name '{}' is used twice (first at line {})",
                                         r.name, first->second));
      }
    }
    r.group = terminal_safe(text(run_, "group").value_or(""));
    r.source = terminal_safe(text(run_, "source").value_or(""));
    if (auto split = choice(run_, "split", kSplits, "split")) r.split = *split;
  }

  // The file a run's model or hardware comes from: a catalog name under `key`, or a path
  // relative to the set file under `file_key`; exactly one of them. Also the node that named it.
  std::optional<std::pair<std::string, YAML::Node>> source_file(const std::string& kind,
                                                                const std::string& key,
                                                                const std::string& noun) {
    const std::string file_key = key + "_file";
    const YAML::Node name = run_[key];
    const YAML::Node file = run_[file_key];
    if (name && file) {
      report(file, fmt::format("give '{}' or '{}', not both", key, file_key));
      return std::nullopt;
    }
    if (!name && !file) {
      report(run_, fmt::format("a run needs '{}' (a catalog {}) or '{}' (a path relative to this "
                               "file)", key, noun, file_key));
      return std::nullopt;
    }
    const std::optional<std::string> given = text(run_, name ? key : file_key);
    if (!given) return std::nullopt;
    if (file) return std::make_pair(resolve(dir_, *given), file);
    try {
      return std::make_pair(preset_path(kind, *given, fmt::format("'{}'", key),
                                        file_key + ": a path relative to this file"),
                            name);
    } catch (const Error& e) {
      report(name, e.what());
      return std::nullopt;
    }
  }

  // Loads what source_file names; a problem with the file is one problem at the key's line.
  template <class T>
  bool load(const std::string& kind, const std::string& key, const std::string& noun,
            T (*loader)(const std::string&), T& out) {
    const auto source = source_file(kind, key, noun);
    if (!source) return false;
    try {
      out = loader(source->first);
      return true;
    } catch (const Error& e) {
      report(source->second, fmt::format("'{}': {}", run_[key] ? key : key + "_file", e.what()));
      return false;
    }
  }

  bool read_model(Run& r) { return load("models", "model", "model", load_model, r.model); }
  bool read_hardware(Run& r) {
    return load("hardware", "hardware", "device", load_hardware, r.hardware);
  }

  // The catalog device's cluster, with the run's `cluster` keys over it. A device without a
  // scale-out bandwidth needs the keys that complete it; read_cluster says which.
  void read_run_cluster(Run& r) {
    const YAML::Node cluster = run_["cluster"];
    if (cluster && !cluster.IsMap()) {
      report(cluster, "'cluster' must be a map of cluster-file keys");
    } else if (cluster) {
      record_fields(cluster, cluster_keys(), "cluster.");
      r.cluster = read_cluster(cluster, r.hardware, path_, "cluster", problems_);
    } else {
      try {
        r.cluster = default_cluster(r.hardware);
      } catch (const Error& e) {
        report(run_, e.what());
      }
    }
  }

  // bf16 unless the run says; the device must have a peak for it.
  void read_precision(Run& r, bool hardware) {
    const std::vector<std::string> precisions(std::begin(kPrecisions), std::end(kPrecisions));
    if (auto p = text(run_, "precision")) {
      if (std::find(precisions.begin(), precisions.end(), *p) == precisions.end()) {
        report(run_["precision"],
               unknown_name("'precision'", "precision", shorten(*p), precisions, *p));
        return;
      }
      r.precision = *p;
    }
    if (!hardware || r.hardware.peak_tflops.count(r.precision)) return;
    std::vector<std::string> known;
    for (const auto& [name, value] : r.hardware.peak_tflops) known.push_back(name);
    report(run_["precision"] ? run_["precision"] : run_,
           fmt::format("'precision': {} gives no {} peak; it gives {}", r.hardware.name,
                       r.precision, join(known, ", ")));
  }

  // The layout keys as plumb plan's options give them: its defaults (ZeRO 1, selective
  // recomputation, FlashAttention), schedule interleaved when vpp > 1 else 1F1B, dp =
  // devices / (tp·cp·pp), the global batch nearest to kDefaultBatchTokens.
  void read_layout(Run& r, bool model, std::optional<double> devices) {
    const YAML::Node given = run_["layout"];
    if (given && !given.IsMap()) {
      report(given, "'layout' must be a map of plumb plan's layout options");
      return;
    }
    const YAML::Node node = given ? given : YAML::Node(YAML::NodeType::Map);
    const size_t before = problems_.size();
    check_keys(node, kLayoutKeys, "layout");
    record_fields(node, kLayoutKeys, "");
    Layout p;
    p.zero = 1;
    p.recompute = Recompute::kSelective;
    const auto count = [&](const char* key, const NumberRange& range, int& out) {
      if (auto v = number(node, key, range)) out = static_cast<int>(*v);
    };
    count("tp", kDeviceCount, p.tp);
    count("pp", kDeviceCount, p.pp);
    count("ep", kDeviceCount, p.ep);
    count("etp", kDeviceCount, p.etp);
    count("cp", kDeviceCount, p.cp);
    count("vpp", kDeviceCount, p.vpp);
    count("zero", kZeroStage, p.zero);
    const std::optional<double> dp = number(node, "dp", kDeviceCount);
    const std::optional<double> mbs = number(node, "mbs", kMicroBatch);
    const std::optional<double> gbs = number(node, "gbs", kGlobalBatch);
    const std::optional<double> seq_len = number(node, "seq_len", kSeqLen);
    if (mbs) p.micro_batch = static_cast<int64_t>(*mbs);
    if (auto v = choice(node, "recompute", kRecomputeNames, "recomputation")) p.recompute = *v;
    if (auto v = choice(node, "dispatch_precision", kDispatchPrecisionNames, "dispatch precision")) {
      p.dispatch = *v;
    }
    const std::optional<Schedule> schedule = choice(node, "schedule", kScheduleNames, "schedule");
    if (auto v = flag(node, "ep_overlap")) p.ep_overlap = *v;
    if (auto v = flag(node, "shared_expert_overlap")) p.shared_expert_overlap = *v;
    if (auto v = flag(node, "tp_overlap")) p.tp_overlap = *v;
    for (const LayoutFlag& f : kLayoutFlags) {
      if (auto v = flag(node, f.key)) p.*f.member = *v;
    }
    if (auto v = flag(node, "flash_attention")) p.flash_attention = *v;
    if (auto v = number(node, "capacity_factor", kCapacityFactor)) p.capacity_factor = *v;
    if (auto v = flag(node, "einsum_dispatch")) p.einsum_dispatch = *v;
    if (auto v = choice(node, "cp_algo", kCpAlgoNames, "context-parallel algorithm")) p.cp_algo = *v;
    if (auto v = choice(node, "dispatcher", kDispatcherNames, "token dispatcher")) p.dispatcher = *v;
    if (problems_.size() > before || !model || !devices) return;
    if (seq_len) r.model.seq_len = static_cast<int64_t>(*seq_len);
    p.schedule = schedule.value_or(p.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB);
    const double model_parallel = static_cast<double>(p.tp) * p.cp * p.pp;
    p.dp = dp ? static_cast<int>(*dp)
              : static_cast<int>(std::max(1.0, std::floor(*devices / model_parallel)));
    finish_layout(r, p, gbs, static_cast<int64_t>(*devices), given ? given : run_);
  }

  void finish_layout(Run& r, Layout& p, std::optional<double> gbs, int64_t devices,
                     const YAML::Node& at) {
    if (beyond_max_devices(p)) {
      report(at, fmt::format("layout for {}: {}", r.model.name, too_many_devices(p)));
      return;
    }
    p.global_batch = gbs ? static_cast<int64_t>(*gbs)
                         : global_batch_near(p, r.model, kDefaultBatchTokens);
    const std::vector<std::string> problems = layout_problems(r.model, p, devices);
    if (!problems.empty()) {
      report(at, fmt::format("layout for {} on {} devices: {}", r.model.name, devices,
                             join(problems, "; ")));
      return;
    }
    r.layout = p;
  }

  void read_measured(Run& r) {
    const YAML::Node node = run_["measured"];
    const std::string keys = join(quantity_keys(), ", ");
    if (!node || !node.IsMap()) {
      report(node ? node : run_, fmt::format("'measured' must give one of {}", keys));
      return;
    }
    check_keys(node, kMeasuredKeys, "measured");
    record_fields(node, kMeasuredKeys, "");
    std::vector<std::string> given;
    for (const Quantity& q : kQuantities) {
      if (node[q.key]) given.push_back(fmt::format("'{}'", q.key));
      if (node[q.key] && !r.quantity) r.quantity = &q;
    }
    if (given.size() != 1) {
      report(node, given.empty() ? fmt::format("'measured' must give one of {}", keys)
                                 : fmt::format("'measured' gives {}: exactly one of {}",
                                               join(given, " and "), keys));
      r.quantity = nullptr;
      return;
    }
    if (auto v = number(node, r.quantity->key, r.quantity->range)) r.measured = *v;
    if (!node["flops_per_token"]) return;
    if (!r.quantity->tokens_per_s) {
      report(node["flops_per_token"],
             fmt::format("'flops_per_token' turns tflops_per_device or mfu into tokens/s; {} "
                         "needs none", r.quantity->key));
      return;
    }
    r.flops_per_token = number(node, "flops_per_token", kFlopsPerToken);
  }

  // published: a list of field names; each line is kept to name it in messages.
  std::map<std::string, int> read_published() {
    std::map<std::string, int> marked;
    const YAML::Node node = run_["published"];
    if (!node) return marked;
    if (!node.IsSequence()) {
      report(node, "'published' must be a list of field names");
      return marked;
    }
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) {
        report(item, "'published' lists field names, one per entry");
        continue;
      }
      const auto [first, fresh] = marked.emplace(item.Scalar(), yaml_line(item));
      if (!fresh) {
        report(item, fmt::format("'{}' is listed twice in published (first at line {})",
                                 item.Scalar(), first->second));
      }
    }
    return marked;
  }

  // assumed: a map of field → why that value (a non-empty string); kept in file order.
  std::map<std::string, int> read_assumed(Run& r) {
    std::map<std::string, int> marked;
    const YAML::Node node = run_["assumed"];
    if (!node) return marked;
    if (!node.IsMap()) {
      report(node, "'assumed' must map each assumed field to why that value");
      return marked;
    }
    for (const auto& item : node) {
      if (!item.first.IsScalar()) {
        report(item.first, "'assumed' keys are field names");
        continue;
      }
      const std::string& field = item.first.Scalar();
      const auto [first, fresh] = marked.emplace(field, yaml_line(item.first));
      if (!fresh) {
        report(item.first, fmt::format("duplicate key '{}' in assumed (first at line {})", field,
                                       first->second));
        continue;
      }
      if (!item.second.IsScalar() || trim_blanks(item.second.Scalar()).empty()) {
        report(item.first, fmt::format("assumed '{}' needs a reason: a non-empty string", field));
        continue;
      }
      r.assumed.emplace_back(field, terminal_safe(item.second.Scalar()));
    }
    return marked;
  }

  // Every field the run gives is in exactly one of published and assumed, and each name there is
  // a field the run gives. A figure in TFLOP/s or MFU without the source's flops_per_token is
  // compared with plumb's own count: assumed must say so under flops_per_token.
  void check_marks(Run& r) {
    const std::map<std::string, int> published = read_published();
    const std::map<std::string, int> assumed = read_assumed(r);
    std::vector<std::string> fields;
    for (const auto& [field, line] : fields_) {
      fields.push_back(field);
      const auto a = assumed.find(field);
      if (published.count(field) && a != assumed.end()) {
        problems_.push_back(fmt::format("{}:{}: '{}' is both published and assumed: it is one "
                                        "or the other", path_, a->second, field));
      } else if (!published.count(field) && a == assumed.end()) {
        problems_.push_back(fmt::format("{}:{}: '{}' is neither published nor assumed: list it "
                                        "in published, or say in assumed why that value",
                                        path_, line, field));
      }
    }
    const bool count_assumed = r.quantity && r.quantity->tokens_per_s && !r.flops_per_token &&
                               !(run_["measured"] && run_["measured"]["flops_per_token"]);
    check_unknown_marks(published, "published", fields, false);
    check_unknown_marks(assumed, "assumed", fields, count_assumed);
    if (count_assumed && !assumed.count("flops_per_token")) {
      report(run_["measured"],
             fmt::format("'{}' without flops_per_token is compared with plumb's own FLOP count: "
                         "say so in assumed (flops_per_token: why)", r.quantity->key));
    }
  }

  void check_unknown_marks(const std::map<std::string, int>& marked, const char* list,
                           const std::vector<std::string>& fields, bool flops_per_token_ok) {
    for (const auto& [field, line] : marked) {
      if (std::find(fields.begin(), fields.end(), field) != fields.end()) continue;
      if (flops_per_token_ok && field == "flops_per_token") continue;
      problems_.push_back(fmt::format("{}:{}: '{}' in {} is not a field this run gives{}", path_,
                                      line, shorten(field), list, did_you_mean(field, fields)));
    }
  }

  const YAML::Node run_;
  const std::string& path_;
  const std::string& dir_;
  std::map<std::string, int>& names_;
  Problems& problems_;
  size_t first_problem_;
  std::vector<std::pair<std::string, int>> fields_;  // fields the run gives, and their lines
};

// The run's row from its prediction.
ValidationRow predict(const Run& r, const Prediction& pred) {
  ValidationRow row(r.group, row_layout(r.layout), r.quantity->predicted(pred), r.measured);
  row.quantity = r.quantity->label;
  if (r.flops_per_token) {
    const double peak = r.hardware.peak_tflops.at(r.precision) * 1e12;
    row.predicted = tokens_per_s_per_device(pred);
    row.published = r.quantity->tokens_per_s(r.measured, *r.flops_per_token, peak);
    row.quantity = fmt::format("tokens/s per device (from {})", r.quantity->label);
    row.notes.push_back(fmt::format(
        "published {} {:g} with the source's {:.4g} FLOPs per token = {:.4g} tokens/s per device",
        r.quantity->label, r.measured, *r.flops_per_token, row.published));
  }
  row.name = r.name;
  row.source = r.source;
  row.split = r.split;
  describe_run(row, r.model, r.hardware, pred);
  row.time_quantity = !r.flops_per_token && std::string(r.quantity->key) == "step_time_s";
  row.assumed = r.assumed;
  if (compute_model(r.hardware).efficiency_assumed) {
    row.notes.push_back(fmt::format("{} has no measured GEMM efficiency in the catalog: {:.2f} "
                                    "assumed", r.hardware.name, kAssumedMamfEfficiency));
  }
  if (!pred.memory.fits()) {
    row.notes.push_back(fmt::format("plumb predicts {:.1f} GB per device, more than the {:g} GB "
                                    "of {}", (pred.memory.total() + pred.memory.reserved) / 1e9,
                                    r.hardware.hbm_gb, r.hardware.name));
  }
  return row;
}

// The run as a step; its measured step time is filled once the run is predicted.
MeasuredStep as_step(const Run& r) {
  MeasuredStep s;
  s.source = r.name;
  s.model = r.model;
  s.hardware = r.hardware;
  s.cluster = r.cluster;
  s.precision = r.precision;
  s.layout = r.layout;
  return s;
}

// The set's header keys; every problem is added to `problems`.
void read_header(const YAML::Node& root, const std::string& path, RunSet& out,
                 Problems& problems) {
  for (const YamlProblem& p : key_problems(root, kSetKeys)) {
    problems.push_back(fmt::format("{}:{}: {}", path, p.line, p.message));
  }
  const auto string_key = [&](const char* key) -> std::string {
    const YAML::Node v = root[key];
    if (v && v.IsScalar()) return terminal_safe(v.Scalar());
    if (v) problems.push_back(fmt::format("{}:{}: '{}' must be a string", path, yaml_line(v), key));
    return {};
  };
  out.set.name = string_key("set");
  if (!root["set"]) {
    problems.push_back(fmt::format("{}: missing key 'set' (the set's short name)", path));
  }
  const std::string title = string_key("title");
  out.set.source = title.empty() ? path : fmt::format("{} ({})", title, path);
  const YAML::Node targets = root["targets"];
  if (!targets) return;
  if (!targets.IsMap()) {
    problems.push_back(fmt::format("{}:{}: 'targets' must be a map: mape, max_error", path,
                                   yaml_line(targets)));
    return;
  }
  for (const YamlProblem& p : key_problems(targets, kTargetKeys, "targets")) {
    problems.push_back(fmt::format("{}:{}: {}", path, p.line, p.message));
  }
  const auto target = [&](const char* key, double& into) {
    const YAML::Node v = targets[key];
    std::string problem;
    if (!v) return;
    if (auto x = yaml_number(v, kTarget, problem)) {
      into = *x;
    } else {
      problems.push_back(fmt::format("{}:{}: 'targets.{}' {}", path, yaml_line(v), key, problem));
    }
  };
  target("mape", out.targets.mape);
  target("max_error", out.targets.max_error);
}

// The quantity the set's header names: the rows' own when they share one.
std::string set_quantity(const std::vector<ValidationRow>& rows) {
  for (const ValidationRow& r : rows) {
    if (r.quantity != rows.front().quantity) return "quantity per row";
  }
  return rows.empty() ? "" : rows.front().quantity;
}

RunSet read_set(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) {
    throw Error(fmt::format("{}: expected a run set: a map of set, title, targets and runs", path));
  }
  Problems problems;
  RunSet out;
  read_header(root, path, out, problems);
  const YAML::Node runs = root["runs"];
  std::vector<Run> read;
  if (!runs || !runs.IsSequence() || runs.size() == 0) {
    problems.push_back(fmt::format("{}:{}: 'runs' must be a list of runs, at least one", path,
                                   runs ? yaml_line(runs) : 1));
  } else {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    std::map<std::string, int> names;
    for (const YAML::Node& run : runs) {
      if (auto r = RunReader(run, path, dir, names, problems).read()) read.push_back(*r);
    }
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  for (const Run& r : read) {
    MeasuredStep step = as_step(r);
    const Prediction pred = predict_measured(step, {});
    out.set.rows.push_back(predict(r, pred));
    // The predicted step time scaled by how much faster or slower the published figure is than
    // the predicted one (every quantity is a speed or a time).
    step.measured[static_cast<size_t>(StepPart::kStep)] =
        pred.step_time_s / out.set.rows.back().speed_ratio();
    out.steps.push_back(std::move(step));
  }
  out.set.quantity = set_quantity(out.set.rows);
  summarize(out.set);
  return out;
}

}  // namespace

RunSet run_set_from_text(const std::string& text, const std::string& path) {
  const YAML::Node root = load_yaml(text, path);
  try {
    return read_set(root, path);
  } catch (const YAML::Exception& e) {
    // A node of a shape the readers did not expect; they check shapes first, so this is a
    // safety net that keeps any such input a message with its line.
    throw Error(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
}

ValidationSet calibrated_leave_one_out(const RunSet& r) {
  ValidationSet out = r.set;
  out.name = r.set.name + " · calibrated";
  for (size_t i = 0; i < out.rows.size(); ++i) {
    ValidationRow& row = out.rows[i];
    std::vector<MeasuredStep> others;
    for (size_t j = 0; j < r.steps.size(); ++j) {
      const bool same_cluster = r.set.rows[j].group == row.group && !row.group.empty() &&
                                r.steps[j].hardware.name == r.steps[i].hardware.name;
      if (j != i && same_cluster) others.push_back(r.steps[j]);
    }
    if (others.empty()) {
      row.notes.push_back("not calibrated: no other run of its group on its device");
      continue;
    }
    const StepFit fit = fit_efficiencies(others);
    const double before = predict_measured(r.steps[i], {}).step_time_s;
    const double after = predict_measured(r.steps[i], fit.after).step_time_s;
    // Every quantity is a speed or a time: it scales with the step time.
    row.predicted *= row.time_quantity ? after / before : before / after;
    row.notes.push_back(fmt::format("calibrated from {} other run{} of its group", others.size(),
                                    others.size() == 1 ? "" : "s"));
  }
  summarize(out);
  return out;
}

std::vector<ScalePair> scale_pairs(const std::vector<const RunSet*>& sets) {
  struct Entry {
    const MeasuredStep* step;
    const ValidationRow* row;
  };
  std::vector<Entry> all;
  for (const RunSet* r : sets) {
    for (size_t i = 0; i < r->steps.size(); ++i) all.push_back({&r->steps[i], &r->set.rows[i]});
  }
  std::vector<ScalePair> pairs;
  for (const Entry& small : all) {
    std::optional<StepFit> fit;  // on the smaller run alone, once, when it has a larger one
    for (const Entry& large : all) {
      const int64_t s = small.step->layout.devices(), l = large.step->layout.devices();
      if (s >= l || small.step->model.name != large.step->model.name ||
          small.step->hardware.name != large.step->hardware.name) {
        continue;
      }
      if (!fit) fit = fit_efficiencies({*small.step});
      const double before = predict_measured(*large.step, {}).step_time_s;
      const double after = predict_measured(*large.step, fit->after).step_time_s;
      const double measured = large.step->measured[static_cast<size_t>(StepPart::kStep)];
      // Speed errors: a step predicted too short is a speed predicted too high.
      pairs.push_back({small.row->name, large.row->name, s, l, measured / before - 1,
                       measured / after - 1, large.row->split,
                       small.row->group == large.row->group});
    }
  }
  return pairs;
}

ScaleSummary summarize_pairs(const std::vector<ScalePair>& pairs, double ratio, double tolerance,
                             const std::string& split, PairScope scope) {
  ScaleSummary s;
  for (const ScalePair& p : pairs) {
    const double apart = static_cast<double>(p.large_devices) / static_cast<double>(p.small_devices);
    if (apart < ratio || (!split.empty() && p.split != split)) continue;
    if (scope == PairScope::kSameSource && !p.same_source) continue;
    ++s.pairs;
    s.within_before += std::fabs(p.error_before) <= tolerance ? 1 : 0;
    s.within_after += std::fabs(p.error_after) <= tolerance ? 1 : 0;
  }
  return s;
}

RunSet load_run_set(const std::string& path) {
  return run_set_from_text(read_text_file(path, "run set"), path);
}

std::vector<std::string> run_set_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace plumb::plan
