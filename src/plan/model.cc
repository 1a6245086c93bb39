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
constexpr int kMaxModelCount = 1'000'000;
constexpr int64_t kMaxSize = 1'000'000'000;

const std::vector<std::string> kModelKeys = {
    "name",     "layers",          "hidden",   "heads", "kv_heads", "ffn_hidden", "vocab",
    "seq_len",  "ffn_type",        "tied_embeddings", "params_b", "moe", "head_dim", "mla",
    "mtp_layers"};
const std::vector<std::string> kMoeKeys = {"experts",           "top_k",
                                           "shared_experts",    "expert_ffn_hidden",
                                           "first_dense_layers", "max_nodes_per_token"};
// DeepSeek-V3 config.json's names for multi-head latent attention.
const std::vector<std::string> kMlaKeys = {"q_lora_rank",      "kv_lora_rank",
                                           "qk_nope_head_dim", "qk_rope_head_dim",
                                           "v_head_dim",       "attention_pad_head_dim"};

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
  moe.experts = r.whole<int>("experts", 1, kMaxModelCount);
  moe.top_k = r.whole<int>("top_k", 1, kMaxModelCount);
  moe.shared_experts = r.whole<int>("shared_experts", 0, kMaxModelCount, false);
  moe.expert_ffn_hidden = r.whole<int64_t>("expert_ffn_hidden", 1, kMaxSize);
  moe.first_dense_layers = r.whole<int>("first_dense_layers", 0, kMaxModelCount, false);
  moe.max_nodes_per_token = r.whole<int>("max_nodes_per_token", 0, kMaxModelCount, false);
  if (moe.top_k > moe.experts) {
    problems.push_back(fmt::format("{}: moe: top_k {} exceeds experts {}", path, moe.top_k,
                                   moe.experts));
  }
  if (moe.max_nodes_per_token > moe.top_k) {
    problems.push_back(fmt::format("{}: moe: max_nodes_per_token {} exceeds top_k {} (a token's "
                                   "experts are on at most top_k nodes)",
                                   path, moe.max_nodes_per_token, moe.top_k));
  }
  return moe;
}

// q_lora_rank 0 or absent: queries projected directly (DeepSeek-V2-Lite).
MlaSpec read_mla(const YAML::Node& node, const std::string& path, Problems& problems) {
  MlaSpec mla;
  if (!node.IsMap()) {
    problems.push_back(fmt::format("{}:{}: 'mla' must be a map of {}", path, yaml_line(node),
                                   join(kMlaKeys, ", ")));
    return mla;
  }
  Reader r(node, path, path + ": mla", problems);
  r.check_keys(kMlaKeys, "mla");
  mla.q_lora_rank = r.whole<int64_t>("q_lora_rank", 0, kMaxSize, false);
  mla.kv_lora_rank = r.whole<int64_t>("kv_lora_rank", 1, kMaxSize);
  mla.qk_nope_head_dim = r.whole<int64_t>("qk_nope_head_dim", 1, kMaxSize);
  mla.qk_rope_head_dim = r.whole<int64_t>("qk_rope_head_dim", 0, kMaxSize);
  mla.v_head_dim = r.whole<int64_t>("v_head_dim", 1, kMaxSize);
  mla.attention_pad_head_dim = r.whole<int64_t>("attention_pad_head_dim", 0, kMaxSize, false);
  return mla;
}

// Counts beyond what the model can be: more dense layers than layers, more parameters than
// plumb plans for (which also keeps parameter_count inside int64).
void check_model(const ModelSpec& m, const std::string& path, Problems& problems) {
  if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    problems.push_back(fmt::format("{}: heads {} is not a multiple of kv_heads {}", path, m.heads,
                                   m.kv_heads));
  }
  if (m.mla && m.head_dim > 0) {
    problems.push_back(fmt::format("{}: head_dim and mla exclude each other (MLA's head widths are "
                                   "qk_nope_head_dim + qk_rope_head_dim and v_head_dim)", path));
  }
  if (m.mla && m.kv_heads != m.heads) {
    problems.push_back(fmt::format("{}: with mla, kv_heads {} must equal heads {} (MLA up-projects "
                                   "K and V for every head)", path, m.kv_heads, m.heads));
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
  m.layers = r.whole<int>("layers", 1, kMaxModelCount);
  m.hidden = r.whole<int64_t>("hidden", 1, kMaxSize);
  m.heads = r.whole<int>("heads", 1, kMaxModelCount);
  m.kv_heads = r.whole<int>("kv_heads", 1, kMaxModelCount);
  m.ffn_hidden = r.whole<int64_t>("ffn_hidden", 1, kMaxSize);
  m.vocab = r.whole<int64_t>("vocab", 1, kMaxSize);
  m.seq_len = r.whole<int64_t>("seq_len", 1, kMaxSize);
  m.ffn_type = ffn_type_of(r.get<std::string>("ffn_type"), path, problems);
  m.tied_embeddings = r.get<bool>("tied_embeddings", false);
  m.params_b = r.number("params_b", {0, kMaxParameters / 1e9});
  if (root["moe"]) m.moe = read_moe(root["moe"], path, problems);
  m.head_dim = r.whole<int64_t>("head_dim", 1, kMaxSize, false);
  if (root["mla"]) m.mla = read_mla(root["mla"], path, problems);
  m.mtp_layers = r.whole<int>("mtp_layers", 0, kMaxModelCount, false);
  check_model(m, path, problems);
  return m;
}

// Weight counts in N: int64_t, or double to bound a count before it is formed in int64.
template <class N>
N n(int64_t v) {
  return static_cast<N>(v);
}

template <class N>
struct Widths {
  N q, k, v, o;
};

template <class N>
Widths<N> widths(const ModelSpec& m) {
  const N heads = n<N>(m.heads);
  if (m.mla) {
    const N qk = heads * n<N>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    const N v = heads * n<N>(m.mla->v_head_dim);
    return {qk, qk, v, v};
  }
  if (m.head_dim > 0) {
    const N d = n<N>(m.head_dim);
    return {heads * d, n<N>(m.kv_heads) * d, n<N>(m.kv_heads) * d, heads * d};
  }
  const N h = n<N>(m.hidden);
  const N kv = h * n<N>(m.kv_heads) / heads;
  return {h, kv, kv, h};
}

// DeepSeek-V2 Section 2.1: the query path (compressed or not), the KV latent with the shared
// RoPE key and their up-projections, the output projection.
template <class N>
N mla_weights(const ModelSpec& m, const Widths<N>& w) {
  const MlaSpec& a = *m.mla;
  const N h = n<N>(m.hidden);
  const N q_rank = n<N>(a.q_lora_rank);
  const N q = a.q_lora_rank > 0 ? h * q_rank + q_rank + q_rank * w.q : h * w.q;
  const N kv_rank = n<N>(a.kv_lora_rank);
  const N up = n<N>(m.heads) * n<N>(a.qk_nope_head_dim + a.v_head_dim);
  const N kv = h * (kv_rank + n<N>(a.qk_rope_head_dim)) + kv_rank + kv_rank * up;
  return q + kv + w.o * h;
}

template <class N>
N attention_weights(const ModelSpec& m) {
  const Widths<N> w = widths<N>(m);
  if (m.mla) return mla_weights(m, w);
  const N h = n<N>(m.hidden);
  return h * w.q + h * w.k + h * w.v + w.o * h;
}

template <class N>
N ffn_weights(const ModelSpec& m, int64_t f) {
  return (m.ffn_type == FfnType::kSwiglu ? 3 : 2) * n<N>(m.hidden) * n<N>(f);
}

// One decoder layer: attention, two norms, and a dense FFN or the experts and the router.
template <class N>
N layer_weights(const ModelSpec& m, bool moe_layer) {
  const N h = n<N>(m.hidden);
  const N common = attention_weights<N>(m) + 2 * h;
  if (!moe_layer) return common + ffn_weights<N>(m, m.ffn_hidden);
  const N experts = n<N>(m.moe->experts + m.moe->shared_experts);
  return common + experts * ffn_weights<N>(m, m.moe->expert_ffn_hidden) +
         h * n<N>(m.moe->experts);
}

int dense_layer_count(const ModelSpec& m) {
  return m.moe ? std::min(m.moe->first_dense_layers, m.layers) : m.layers;
}

template <class N>
N main_weights(const ModelSpec& m) {
  const N h = n<N>(m.hidden);
  const int dense = dense_layer_count(m);
  N total = n<N>(m.vocab) * h * (m.tied_embeddings ? 1 : 2) + h;
  if (dense > 0) total += n<N>(dense) * layer_weights<N>(m, false);
  if (m.layers > dense) total += n<N>(m.layers - dense) * layer_weights<N>(m, true);
  return total;
}

template <class N>
N mtp_module_weights(const ModelSpec& m) {
  const N h = n<N>(m.hidden);
  return layer_weights<N>(m, m.moe.has_value()) + 2 * h * h + 3 * h;
}

template <class N>
N count_parameters(const ModelSpec& m) {
  return main_weights<N>(m) + n<N>(m.mtp_layers) * mtp_module_weights<N>(m);
}

}  // namespace

double parameter_count_estimate(const ModelSpec& m) { return count_parameters<double>(m); }

namespace {

ModelSpec model_from_root(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of model keys", path));
  Problems problems;
  ModelSpec m = read_model(root, path, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return m;
}

}  // namespace

ModelSpec load_model(const std::string& path) {
  return model_from_root(load_yaml_file(path, "model file"), path);
}

ModelSpec model_from_text(std::string_view text, const std::string& source) {
  return model_from_root(load_yaml(text, source), source);
}

int64_t q_width(const ModelSpec& m) { return widths<int64_t>(m).q; }
int64_t k_width(const ModelSpec& m) { return widths<int64_t>(m).k; }
int64_t v_width(const ModelSpec& m) { return widths<int64_t>(m).v; }
int64_t o_width(const ModelSpec& m) { return widths<int64_t>(m).o; }

int64_t attention_params(const ModelSpec& m) { return attention_weights<int64_t>(m); }

int64_t ffn_params(const ModelSpec& m, int64_t f) { return ffn_weights<int64_t>(m, f); }

int64_t mtp_module_params(const ModelSpec& m) { return mtp_module_weights<int64_t>(m); }

int64_t main_parameter_count(const ModelSpec& m) { return main_weights<int64_t>(m); }

int64_t parameter_count(const ModelSpec& m) { return count_parameters<int64_t>(m); }

int64_t routed_expert_params(const ModelSpec& m) {
  if (!m.moe) return 0;
  const int64_t moe_layers = m.layers - dense_layer_count(m) + m.mtp_layers;
  return moe_layers * m.moe->experts * ffn_params(m, m.moe->expert_ffn_hidden);
}

int64_t activated_parameter_count(const ModelSpec& m) {
  int64_t idle_experts = 0;
  if (m.moe) {
    idle_experts = int64_t{m.layers - dense_layer_count(m)} * (m.moe->experts - m.moe->top_k) *
                   ffn_params(m, m.moe->expert_ffn_hidden);
  }
  const int64_t input_embedding = m.tied_embeddings ? 0 : m.vocab * m.hidden;
  return main_parameter_count(m) - idle_experts - input_embedding;
}

}  // namespace plumb::plan
