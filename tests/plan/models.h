// Model shapes the plan tests work their examples on, from their papers.
#pragma once

#include "plan/model.h"

namespace plumb::plan::test_models {

// GPT-3 175B (Brown et al. 2020, Table 2.1): tied embeddings, GELU FFN of 4h.
inline ModelSpec gpt3() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 50257;
  m.seq_len = 2048;
  m.tied_embeddings = true;
  return m;
}

// Llama 3 8B ("The Llama 3 Herd of Models", Table 3): GQA with 8 KV heads, SwiGLU, untied.
inline ModelSpec llama3_8b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.ffn_type = FfnType::kSwiglu;
  return m;
}

}  // namespace plumb::plan::test_models
