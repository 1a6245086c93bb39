// Model shapes the plan tests work their examples on, from their papers.
#pragma once

#include "plan/hardware.h"
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

// DeepSeek-V3 (arXiv:2412.19437, Section 4.2; data/models/deepseek-v3-671b.yaml): MLA, 3 dense
// layers then 58 MoE layers of 256 routed + 1 shared expert, top-8, one MTP module.
inline ModelSpec deepseek_v3() {
  ModelSpec m;
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.seq_len = 4096;
  m.ffn_type = FfnType::kSwiglu;
  m.moe = MoeSpec{256, 8, 1, 2048, 3, 4};
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.mtp_layers = 1;
  return m;
}

// Qwen3-30B-A3B (Qwen3 report Table 2 and config.json; data/models/qwen3-30b-a3b.yaml): 32 query
// heads of 128 (4096 wide on a 2048 model), 4 KV heads, 128 experts top-8, no shared expert.
inline ModelSpec qwen3_30b_a3b() {
  ModelSpec m;
  m.layers = 48;
  m.hidden = 2048;
  m.heads = 32;
  m.kv_heads = 4;
  m.head_dim = 128;
  m.ffn_hidden = 6144;
  m.vocab = 151936;
  m.seq_len = 4096;
  m.ffn_type = FfnType::kSwiglu;
  m.moe = MoeSpec{128, 8, 0, 768, 0, 0};
  return m;
}

// Mixtral 8x7B (Jiang et al. 2024, Table 1; data/models/mixtral-8x7b.yaml) at the 4,096-token
// sequence ModelLink's example pre-trains at: 32 layers, GQA with 8 KV heads, 8 experts of
// 14,336, top-2, every layer MoE.
inline ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.ffn_type = FfnType::kSwiglu;
  m.moe = MoeSpec{8, 2, 0, 14336, 0, 0};
  return m;
}

// A Hopper-class device for the plan tests: 989 dense bf16 TFLOP/s, 80 GB at 3.35 TB/s, 8 per
// node, `scaleup` GB/s of NVLink per device (450 on H100 SXM, 200 on H800), 50 GB/s scale-out,
// GEMM efficiency 0.8.
inline HardwareSpec hopper(const char* name = "H100", double scaleup = 450) {
  HardwareSpec hw;
  hw.name = name;
  hw.peak_tflops = {{"bf16", 989}};
  hw.hbm_gb = 80;
  hw.hbm_tbps = 3.35;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = scaleup;
  hw.scaleout_gbps_per_device = 50;
  hw.efficiency = 0.8;
  return hw;
}

}  // namespace plumb::plan::test_models
