#include "plan/model.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::plan {
namespace {

// Upper bounds: counts (layers, heads, experts) and sizes (hidden, vocab, sequence) far above any
// published model. They catch a mistyped value early; the products the planner forms from them
// are kept inside int64 by kMaxParameters.
constexpr int kMaxCount = 1'000'000;
constexpr int64_t kMaxSize = 1'000'000'000;

const std::vector<std::string> kModelKeys = {"name",     "layers",   "hidden",          "heads",
                                             "kv_heads", "ffn_hidden", "vocab",         "seq_len",
                                             "ffn_type", "tied_embeddings", "params_b", "moe"};
const std::vector<std::string> kMoeKeys = {"experts", "top_k", "shared_experts",
                                           "expert_ffn_hidden", "first_dense_layers"};

using Problems = std::vector<std::string>;

// Reads the keys of one YAML map, collecting every problem instead of stopping at the first.
class Reader {
 public:
  // `where` names the map in messages: the file, or "<file>: moe".
  Reader(const YAML::Node& node, std::string path, std::string where, Problems& problems)
      : node_(node), path_(std::move(path)), where_(std::move(where)), problems_(problems) {}

  // Duplicate and unknown keys, each at its line.
  void check_keys(const std::vector<std::string>& known, std::string_view map_name = {}) {
    for (const YamlProblem& p : key_problems(node_, known, map_name)) {
      problems_.push_back(fmt::format("{}:{}: {}", path_, p.line, p.message));
    }
  }

  template <class T>
  T get(const char* key, bool required = true) {
    const YAML::Node value = node_[key];
    if (!value) {
      if (required) problems_.push_back(fmt::format("{}: missing key '{}'", where_, key));
      return T{};
    }
    try {
      return value.as<T>();
    } catch (const YAML::Exception&) {
      problems_.push_back(fmt::format("{}:{}: '{}' has the wrong type", path_, yaml_line(value), key));
      return T{};
    }
  }

  // A whole number from `least` to `most`; absent: a problem when required, else 0.
  template <class T>
  T whole(const char* key, T least, T most, bool required = true) {
    const NumberRange range{static_cast<double>(least), static_cast<double>(most), false, true};
    return static_cast<T>(number(key, range, required));
  }

  // A number within `range`; absent: a problem when required, else 0.
  double number(const char* key, const NumberRange& range, bool required = false) {
    const YAML::Node value = node_[key];
    if (!value) {
      if (required) problems_.push_back(fmt::format("{}: missing key '{}'", where_, key));
      return 0;
    }
    std::string problem;
    if (auto v = yaml_number(value, range, problem)) return *v;
    problems_.push_back(fmt::format("{}:{}: '{}' {}", path_, yaml_line(value), key, problem));
    return 0;
  }

 private:
  YAML::Node node_;
  std::string path_;
  std::string where_;
  Problems& problems_;
};

FfnType ffn_type_of(const std::string& text, const std::string& path, Problems& problems) {
  if (text == "swiglu") return FfnType::kSwiglu;
  if (text != "gelu") {
    problems.push_back(fmt::format("{}: ffn_type '{}': expected gelu or swiglu", path, text));
  }
  return FfnType::kGelu;
}

MoeSpec read_moe(const YAML::Node& node, const std::string& path, Problems& problems) {
  MoeSpec moe;
  if (!node.IsMap()) {
    problems.push_back(fmt::format("{}:{}: 'moe' must be a map of {}", path, node.Mark().line + 1,
                                   join(kMoeKeys, ", ")));
    return moe;
  }
  Reader r(node, path, path + ": moe", problems);
  r.check_keys(kMoeKeys, "moe");
  moe.experts = r.whole<int>("experts", 1, kMaxCount);
  moe.top_k = r.whole<int>("top_k", 1, kMaxCount);
  moe.shared_experts = r.whole<int>("shared_experts", 0, kMaxCount, false);
  moe.expert_ffn_hidden = r.whole<int64_t>("expert_ffn_hidden", 1, kMaxSize);
  moe.first_dense_layers = r.whole<int>("first_dense_layers", 0, kMaxCount, false);
  if (moe.top_k > moe.experts) {
    problems.push_back(fmt::format("{}: moe: top_k {} exceeds experts {}", path, moe.top_k,
                                   moe.experts));
  }
  return moe;
}

// Counts beyond what the model can be: more dense layers than layers, more parameters than
// plumb plans for (which also keeps parameter_count inside int64).
void check_model(const ModelSpec& m, const std::string& path, Problems& problems) {
  if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    problems.push_back(fmt::format("{}: heads {} is not a multiple of kv_heads {}", path, m.heads,
                                   m.kv_heads));
  }
  if (m.moe && m.moe->first_dense_layers > m.layers) {
    problems.push_back(fmt::format("{}: moe: first_dense_layers {} exceeds layers {}", path,
                                   m.moe->first_dense_layers, m.layers));
  }
  if (!problems.empty()) return;  // the count needs every value
  const double parameters = parameter_count_estimate(m);
  if (parameters > kMaxParameters) {
    problems.push_back(fmt::format("{}: {:.3g} parameters, more than the {:g} plumb plans for",
                                   path, parameters, kMaxParameters));
  }
}

ModelSpec read_model(const YAML::Node& root, const std::string& path, Problems& problems) {
  Reader r(root, path, path, problems);
  r.check_keys(kModelKeys);
  ModelSpec m;
  m.name = r.get<std::string>("name");
  m.layers = r.whole<int>("layers", 1, kMaxCount);
  m.hidden = r.whole<int64_t>("hidden", 1, kMaxSize);
  m.heads = r.whole<int>("heads", 1, kMaxCount);
  m.kv_heads = r.whole<int>("kv_heads", 1, kMaxCount);
  m.ffn_hidden = r.whole<int64_t>("ffn_hidden", 1, kMaxSize);
  m.vocab = r.whole<int64_t>("vocab", 1, kMaxSize);
  m.seq_len = r.whole<int64_t>("seq_len", 1, kMaxSize);
  m.ffn_type = ffn_type_of(r.get<std::string>("ffn_type"), path, problems);
  m.tied_embeddings = r.get<bool>("tied_embeddings", false);
  m.params_b = r.number("params_b", {0, kMaxParameters / 1e9});
  if (root["moe"]) m.moe = read_moe(root["moe"], path, problems);
  check_model(m, path, problems);
  return m;
}

// Every weight, counted in N (int64_t, or double to bound the count before it is formed in
// int64).
template <class N>
N count_parameters(const ModelSpec& m) {
  const N h = static_cast<N>(m.hidden);
  const N kv = h * static_cast<N>(m.kv_heads) / static_cast<N>(m.heads);
  const N attention = 2 * h * h + 2 * h * kv;
  const auto ffn = [&](int64_t f) { return (m.ffn_type == FfnType::kSwiglu ? 3 : 2) * h * static_cast<N>(f); };
  N total = static_cast<N>(m.vocab) * h * (m.tied_embeddings ? 1 : 2) + h;
  const int dense = m.moe ? std::min(m.moe->first_dense_layers, m.layers) : m.layers;
  total += static_cast<N>(m.layers) * (attention + 2 * h);
  total += static_cast<N>(dense) * ffn(m.ffn_hidden);
  if (m.moe) {
    const N experts = static_cast<N>(m.moe->experts + m.moe->shared_experts);
    total += static_cast<N>(m.layers - dense) *
             (experts * ffn(m.moe->expert_ffn_hidden) + h * static_cast<N>(m.moe->experts));
  }
  return total;
}

}  // namespace

double parameter_count_estimate(const ModelSpec& m) { return count_parameters<double>(m); }

ModelSpec load_model(const std::string& path) {
  const YAML::Node root = load_yaml_file(path, "model file");
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of model keys", path));
  Problems problems;
  ModelSpec m = read_model(root, path, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return m;
}

int64_t attention_params(const ModelSpec& m) {
  const int64_t kv = m.hidden * m.kv_heads / m.heads;
  return 2 * m.hidden * m.hidden + 2 * m.hidden * kv;
}

int64_t ffn_params(const ModelSpec& m, int64_t f) {
  return (m.ffn_type == FfnType::kSwiglu ? 3 : 2) * m.hidden * f;
}

int64_t parameter_count(const ModelSpec& m) { return count_parameters<int64_t>(m); }

}  // namespace plumb::plan
