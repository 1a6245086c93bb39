// `plumb plan`'s model description (data/models/*.yaml) and the parameter count it implies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace plumb::plan {

struct MoeSpec {
  int experts = 0;             // routed experts per MoE layer
  int top_k = 0;               // routed experts per token
  int shared_experts = 0;      // experts every token goes through
  int64_t expert_ffn_hidden = 0;
  int first_dense_layers = 0;  // leading layers with a dense FFN instead
};

enum class FfnType { kGelu, kSwiglu };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  FfnType ffn_type = FfnType::kGelu;
  bool tied_embeddings = false;  // the output layer reuses the input embedding
  std::optional<MoeSpec> moe;
  double params_b = 0;           // the published parameter count (billions), 0 when not given
};

// Reads a model file; every problem at once in one plumb::Error naming the file and key.
ModelSpec load_model(const std::string& path);

// Weights of one decoder layer's attention: Q and O are h×h, K and V h×(h·kv/heads)
// (grouped-query attention, Ainslie et al. 2023). Biases and norms are left out.
int64_t attention_params(const ModelSpec& m);
// One FFN of width f: 2·h·f for GELU (up, down), 3·h·f for SwiGLU (gate, up, down; Shazeer 2020).
int64_t ffn_params(const ModelSpec& m, int64_t f);
// Every weight: embeddings (twice when untied), per layer attention + FFN (routed and shared
// experts and the router for MoE layers), norms (2·h per layer + h).
int64_t parameter_count(const ModelSpec& m);

}  // namespace plumb::plan
