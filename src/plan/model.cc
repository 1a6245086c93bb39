#include "plan/model.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::plan {
namespace {

// Upper bounds: counts (layers, heads, experts) and sizes (hidden, vocab, sequence) far above any
// published model. They catch a mistyped value early; they do not by themselves keep every
// product the planner forms from them inside int64.
constexpr int kMaxCount = 1'000'000;
constexpr int64_t kMaxSize = 1'000'000'000;

// Reads the keys of one YAML map, collecting every problem instead of stopping at the first.
class Reader {
 public:
  Reader(const YAML::Node& node, std::string where, std::vector<std::string>& problems)
      : node_(node), where_(std::move(where)), problems_(problems) {}

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
      problems_.push_back(fmt::format("{}:{}: '{}' has the wrong type", where_,
                                      value.Mark().line + 1, key));
      return T{};
    }
  }

  // A number above zero and at most `most`; a value of the wrong type is reported once, by get().
  template <class T>
  T positive(const char* key, T most) {
    const size_t before = problems_.size();
    const T value = get<T>(key);
    if (problems_.size() != before) return T{};
    if (value <= 0) {
      problems_.push_back(fmt::format("{}:{}: '{}' must be positive", where_,
                                      node_[key].Mark().line + 1, key));
    } else if (value > most) {
      problems_.push_back(fmt::format("{}:{}: '{}' must be at most {}", where_,
                                      node_[key].Mark().line + 1, key, most));
    }
    return value;
  }

  // An optional count from 0 to `most`; absent → 0.
  int count(const char* key, int most) {
    const size_t before = problems_.size();
    const int value = get<int>(key, false);
    if (problems_.size() != before) return 0;
    if (value < 0 || value > most) {
      problems_.push_back(fmt::format("{}:{}: '{}' must be from 0 to {}", where_,
                                      node_[key].Mark().line + 1, key, most));
    }
    return value;
  }

 private:
  YAML::Node node_;
  std::string where_;
  std::vector<std::string>& problems_;
};

FfnType ffn_type_of(const std::string& text, const std::string& path,
                    std::vector<std::string>& problems) {
  if (text == "swiglu") return FfnType::kSwiglu;
  if (text != "gelu") {
    problems.push_back(fmt::format("{}: ffn_type '{}': expected gelu or swiglu", path, text));
  }
  return FfnType::kGelu;
}

MoeSpec read_moe(const YAML::Node& node, const std::string& path,
                 std::vector<std::string>& problems) {
  MoeSpec moe;
  if (!node.IsMap()) {
    problems.push_back(fmt::format("{}:{}: 'moe' must be a map of experts, top_k, "
                                   "shared_experts, expert_ffn_hidden, first_dense_layers",
                                   path, node.Mark().line + 1));
    return moe;
  }
  Reader r(node, path + ": moe", problems);
  moe.experts = r.positive<int>("experts", kMaxCount);
  moe.top_k = r.positive<int>("top_k", kMaxCount);
  moe.shared_experts = r.count("shared_experts", kMaxCount);
  moe.expert_ffn_hidden = r.positive<int64_t>("expert_ffn_hidden", kMaxSize);
  moe.first_dense_layers = r.count("first_dense_layers", kMaxCount);
  if (moe.top_k > moe.experts) {
    problems.push_back(fmt::format("{}: moe: top_k {} exceeds experts {}", path, moe.top_k,
                                   moe.experts));
  }
  return moe;
}

ModelSpec read_model(const YAML::Node& root, const std::string& path,
                     std::vector<std::string>& problems) {
  Reader r(root, path, problems);
  ModelSpec m;
  m.name = r.get<std::string>("name");
  m.layers = r.positive<int>("layers", kMaxCount);
  m.hidden = r.positive<int64_t>("hidden", kMaxSize);
  m.heads = r.positive<int>("heads", kMaxCount);
  m.kv_heads = r.positive<int>("kv_heads", kMaxCount);
  m.ffn_hidden = r.positive<int64_t>("ffn_hidden", kMaxSize);
  m.vocab = r.positive<int64_t>("vocab", kMaxSize);
  m.seq_len = r.positive<int64_t>("seq_len", kMaxSize);
  m.ffn_type = ffn_type_of(r.get<std::string>("ffn_type"), path, problems);
  m.tied_embeddings = r.get<bool>("tied_embeddings", false);
  m.params_b = r.get<double>("params_b", false);
  if (root["moe"]) m.moe = read_moe(root["moe"], path, problems);
  if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    problems.push_back(fmt::format("{}: heads {} is not a multiple of kv_heads {}", path, m.heads,
                                   m.kv_heads));
  }
  return m;
}

}  // namespace

ModelSpec load_model(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the model file", path));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of model keys", path));
  std::vector<std::string> problems;
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

int64_t parameter_count(const ModelSpec& m) {
  int64_t total = m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2) + m.hidden;
  for (int layer = 0; layer < m.layers; ++layer) {
    total += attention_params(m) + 2 * m.hidden;
    if (!m.moe || layer < m.moe->first_dense_layers) {
      total += ffn_params(m, m.ffn_hidden);
      continue;
    }
    const int64_t experts = m.moe->experts + m.moe->shared_experts;
    total += experts * ffn_params(m, m.moe->expert_ffn_hidden) + m.hidden * m.moe->experts;
  }
  return total;
}

}  // namespace plumb::plan
