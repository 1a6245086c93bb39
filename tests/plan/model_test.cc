#include "plan/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "plan/models.h"
#include "support/subprocess.h"

namespace plumb::plan {
namespace {

using test_models::llama3_8b;

// Worked example: Llama 3 8B. Embeddings 128256·4096 twice (untied) = 1,050,673,152; per layer
// attention 2·4096² + 2·4096·1024 = 41,943,040, SwiGLU 3·4096·14336 = 176,160,768, norms 8,192;
// 32 layers + final norm 4,096 = 8,030,261,248 — the count Meta publishes for the checkpoint.
TEST(ModelParams, Llama3_8B) {
  const ModelSpec m = llama3_8b();
  EXPECT_EQ(attention_params(m), 41943040);
  EXPECT_EQ(ffn_params(m, m.ffn_hidden), 176160768);
  EXPECT_EQ(parameter_count(m), 8030261248);
}

// Mixtral 8x7B: 8 SwiGLU experts of 14336 per layer and a 4096×8 router: 46,702,792,704
// (published as 46.7B).
TEST(ModelParams, Mixtral8x7B) {
  ModelSpec m = llama3_8b();
  m.vocab = 32000;
  m.moe = MoeSpec{8, 2, 0, 14336, 0};
  EXPECT_EQ(parameter_count(m), 46702792704);
}

// GPT-3 175B (tied embeddings, GELU FFN of 4h; biases and position embeddings left out):
// 174.57e9, within 0.3% of the 175B of Brown et al. 2020, Table 2.1.
TEST(ModelParams, Gpt3_175B) {
  const ModelSpec m = test_models::gpt3();
  EXPECT_EQ(parameter_count(m), 174566105088);
  EXPECT_NEAR(static_cast<double>(parameter_count(m)) / 175e9, 1.0, 0.003);
}

// head_dim = hidden/heads written out changes nothing: Llama 3 8B's 32 heads of 128 on 4096.
TEST(ModelParams, HeadDimOfHiddenOverHeadsKeepsTheCount) {
  ModelSpec m = llama3_8b();
  m.head_dim = 128;
  EXPECT_EQ(attention_params(m), 41943040);
  EXPECT_EQ(parameter_count(m), 8030261248);
}

// Qwen3-30B-A3B: 32 heads of head_dim 128 on hidden 2048, so Q and O are 2048×4096. Attention
// 2048·4096 + 2·2048·(4·128) + 4096·2048 = 18,874,368; per layer + norms 4,096 + 128 SwiGLU
// experts 128·3·2048·768 = 603,979,776 + router 2048·128 = 262,144 = 623,120,384; × 48 =
// 29,909,778,432 + embeddings 2·151936·2048 = 622,329,856 + final norm 2,048 = 30,532,110,336
// (the model card: "30.5B in total"). Activated: less 48·(128 − 8)·4,718,592 = 27,179,089,920
// idle experts and the 311,164,928 input embedding = 3,041,855,488; with the input embedding, as
// Qwen counts, 3,353,020,416 (the card: "3.3B activated").
TEST(ModelParams, Qwen3HeadDimWiderThanHiddenOverHeads) {
  const ModelSpec m = test_models::qwen3_30b_a3b();
  EXPECT_EQ(q_width(m), 4096);
  EXPECT_EQ(k_width(m), 512);
  EXPECT_EQ(attention_params(m), 18874368);
  EXPECT_EQ(parameter_count(m), 30532110336);
  EXPECT_EQ(activated_parameter_count(m), 3041855488);
  EXPECT_NEAR((activated_parameter_count(m) + 151936.0 * 2048) / 3.3e9, 1.0, 0.02);
}

// DeepSeek-V3's MLA (DeepSeek-V2 Section 2.1, V3 config): W_DQ 7168·1536 = 11,010,048, q norm
// 1,536, W_UQ 1536·128·(128 + 64) = 37,748,736, W_DKV 7168·(512 + 64) = 4,128,768, kv norm 512,
// W_UK + W_UV 512·128·(128 + 128) = 16,777,216, W_O 128·128·7168 = 117,440,512: 187,107,328 per
// layer. Without query compression W_Q is 7168·24,576 = 176,160,768 instead of the first three:
// 314,507,776.
TEST(ModelParams, MultiHeadLatentAttention) {
  ModelSpec m = test_models::deepseek_v3();
  EXPECT_EQ(q_width(m), 24576);
  EXPECT_EQ(k_width(m), 24576);
  EXPECT_EQ(v_width(m), 16384);
  EXPECT_EQ(o_width(m), 16384);
  EXPECT_EQ(attention_params(m), 187107328);
  m.mla->q_lora_rank = 0;
  EXPECT_EQ(attention_params(m), 314507776);
}

// DeepSeek-V3: embeddings 2·129280·7168 = 1,853,358,080 + final norm 7,168; 3 dense layers of
// 187,107,328 + 14,336 norms + 3·7168·18432 = 396,361,728; 58 MoE layers of 187,121,664 + 257
// experts 257·44,040,192 = 11,318,329,344 + router 7168·256 = 1,835,008: 671,026,404,352 (the
// report's 671B). The MTP module (Section 2.2): an MoE layer 11,507,286,016 + M 2·7168² =
// 102,760,448 + 3 norms 21,504 = 11,610,067,968 (README_WEIGHTS.md: "11.5B unique parameters");
// the device holds 682,636,472,320. Activated: less 58·248·44,040,192 = 633,474,121,728 idle
// experts and the 926,679,040 input embedding: 36,625,603,584 (README_WEIGHTS.md: 36.6B; the
// report's "37B" within 1.1%).
TEST(ModelParams, DeepSeekV3MainMtpAndActivated) {
  const ModelSpec m = test_models::deepseek_v3();
  EXPECT_EQ(main_parameter_count(m), 671026404352);
  EXPECT_EQ(mtp_module_params(m), 11610067968);
  EXPECT_EQ(parameter_count(m), 682636472320);
  EXPECT_EQ(routed_expert_params(m), 59 * 256 * int64_t{44040192});
  EXPECT_EQ(activated_parameter_count(m), 36625603584);
  EXPECT_NEAR(activated_parameter_count(m) / 37e9, 1.0, 0.02);
}

TEST(ModelFile, ReadsEveryKeyAndTheMoeBlock) {
  const std::string path = test::temp_dir("model-file") + "/m.yaml";
  test::write_file(path,
                   "name: tiny-moe\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 2\n"
                   "ffn_hidden: 1024\nvocab: 1000\nseq_len: 512\nffn_type: swiglu\n"
                   "params_b: 0.01\nmoe: {experts: 4, top_k: 2, shared_experts: 1,\n"
                   "      expert_ffn_hidden: 128, first_dense_layers: 1}\n");
  const ModelSpec m = load_model(path);
  EXPECT_EQ(m.name, "tiny-moe");
  EXPECT_EQ(m.kv_heads, 2);
  EXPECT_EQ(m.ffn_type, FfnType::kSwiglu);
  EXPECT_FALSE(m.tied_embeddings);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->shared_experts, 1);
  EXPECT_EQ(m.moe->first_dense_layers, 1);
  EXPECT_DOUBLE_EQ(m.params_b, 0.01);
  EXPECT_EQ(m.head_dim, 0);
  EXPECT_FALSE(m.mla.has_value());
  EXPECT_EQ(m.mtp_layers, 0);
  EXPECT_EQ(m.moe->max_nodes_per_token, 0);
}

TEST(ModelFile, ReadsHeadDimMlaMtpAndTheNodeLimit) {
  const std::string path = test::temp_dir("model-arch") + "/m.yaml";
  test::write_file(path,
                   "name: tiny-mla\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 8\n"
                   "ffn_hidden: 1024\nvocab: 1000\nseq_len: 512\nffn_type: swiglu\nmtp_layers: 2\n"
                   "mla: {kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16,\n"
                   "      v_head_dim: 32, attention_pad_head_dim: 64}\n"
                   "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 128, max_nodes_per_token: 2}\n");
  const ModelSpec m = load_model(path);
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 0);  // absent: queries not compressed
  EXPECT_EQ(m.mla->kv_lora_rank, 64);
  EXPECT_EQ(m.mla->qk_nope_head_dim, 32);
  EXPECT_EQ(m.mla->qk_rope_head_dim, 16);
  EXPECT_EQ(m.mla->v_head_dim, 32);
  EXPECT_EQ(m.mla->attention_pad_head_dim, 64);
  EXPECT_EQ(m.mtp_layers, 2);
  EXPECT_EQ(m.moe->max_nodes_per_token, 2);
  const std::string qwen = test::temp_dir("model-head-dim") + "/m.yaml";
  test::write_file(qwen, std::string("name: q\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 2\n"
                                     "head_dim: 64\nffn_hidden: 1024\nvocab: 1000\nseq_len: 512\n"
                                     "ffn_type: swiglu\n"));
  EXPECT_EQ(load_model(qwen).head_dim, 64);
}

TEST(ModelFile, EveryProblemAtOnceWithFileAndLine) {
  const std::string path = test::temp_dir("model-bad") + "/bad.yaml";
  test::write_file(path,
                   "name: bad\nlayers: 0\nhidden: 256\nheads: 8\nkv_heads: 3\n"
                   "ffn_hidden: 1024\nvocab: lots\nffn_type: relu\n");
  try {
    load_model(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: 'layers' must be a whole number from 1 to 1000000, got '0'\n" +
              path + ":7: 'vocab' must be a whole number from 1 to 1000000000, got 'lots'\n" +
              path + ": missing key 'seq_len'\n" +
              path + ": ffn_type 'relu': expected gelu or swiglu\n" +
              path + ": heads 8 is not a multiple of kv_heads 3");
  }
  try {
    load_model(path + ".missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ".missing: cannot read the model file: No such file or directory");
  }
}

// The error of loading `yaml`, its temporary path written as "m.yaml".
std::string model_error(const std::string& name, const std::string& yaml) {
  const std::string path = test::temp_dir(name) + "/m.yaml";
  test::write_file(path, yaml);
  try {
    load_model(path);
  } catch (const Error& e) {
    std::string text = e.what();
    for (size_t at = text.find(path); at != std::string::npos; at = text.find(path, at)) {
      text.replace(at, path.size(), "m.yaml");
    }
    return text;
  }
  return "no error";
}

const char* const kTinyModel =
    "name: tiny\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 8\nffn_hidden: 1024\n"
    "vocab: 1000\nseq_len: 512\nffn_type: gelu\n";

// Issue 10: a repeated key kept its first value and a misspelt one was ignored, so a typo
// silently changed the plan. Both are errors naming the line; the unknown key suggests the
// closest and lists every key.
TEST(ModelFile, DuplicateAndUnknownKeysAreErrors) {
  const std::string path = test::temp_dir("model-keys") + "/m.yaml";
  test::write_file(path, std::string(kTinyModel) + "hidden: 512\nseqlen: 4096\n");
  try {
    load_model(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":10: duplicate key 'hidden' (first at line 3)\n" +
              path + ":11: unknown key 'seqlen' (did you mean 'seq_len'?); expected one of name, "
                     "layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len, ffn_type, "
                     "tied_embeddings, params_b, moe, head_dim, mla, mtp_layers");
  }
}

TEST(ModelFile, KeysOfTheMoeBlockAreCheckedToo) {
  const std::string path = test::temp_dir("model-moe-keys") + "/m.yaml";
  test::write_file(path, std::string(kTinyModel) +
                             "moe:\n  experts: 4\n  top_k: 2\n  expert_ffn_hidden: 128\n"
                             "  top_k: 1\n  shared_expert: 1\n");
  try {
    load_model(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":14: duplicate key 'top_k' (first at line 12)\n" +
              path + ":15: unknown key 'shared_expert' in moe (did you mean 'shared_experts'?); "
                     "expected one of experts, top_k, shared_experts, expert_ffn_hidden, "
                     "first_dense_layers, max_nodes_per_token");
  }
}

// Non-finite, negative, fractional and 300-digit numbers: each names its key, line and range.
TEST(ModelFile, AbsurdNumbersNameTheirRange) {
  EXPECT_EQ(model_error("model-absurd",
                        "name: x\nlayers: 1.5\nhidden: " + std::string(300, '9') +
                            "\nheads: -8\nkv_heads: .inf\nffn_hidden: 1024\nvocab: 1000\n"
                            "seq_len: 512\nffn_type: gelu\nparams_b: .nan\n"),
            "m.yaml:2: 'layers' must be a whole number from 1 to 1000000, got '1.5'\n"
            "m.yaml:3: 'hidden' must be a whole number from 1 to 1000000000, got "
            "'999999999999999999999...'\n"
            "m.yaml:4: 'heads' must be a whole number from 1 to 1000000, got '-8'\n"
            "m.yaml:5: 'kv_heads' must be a whole number from 1 to 1000000, got '.inf'\n"
            "m.yaml:10: 'params_b' must be a number from 0 to 1e+06, got '.nan'");
}

// Counts beyond what a model can be: more dense layers than layers; a model whose weights would
// overflow the planner's 64-bit counts (more than kMaxParameters).
TEST(ModelFile, CountsBeyondTheModelAreRefused) {
  const std::string dense = model_error(
      "model-dense", std::string(kTinyModel) +
                         "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 128, first_dense_layers: 9}\n");
  EXPECT_EQ(dense, "m.yaml: moe: first_dense_layers 9 exceeds layers 4");
  const std::string huge = model_error(
      "model-huge", "name: x\nlayers: 1000000\nhidden: 1000000000\nheads: 8\nkv_heads: 8\n"
                    "ffn_hidden: 1000000000\nvocab: 1000\nseq_len: 512\nffn_type: gelu\n");
  EXPECT_EQ(huge, "m.yaml: 6e+24 parameters, more than the 1e+15 plumb plans for");
}

// The mla block is read as strictly as the file: a misspelt key names its line and the keys
// expected, the key it should have been is missing, numbers out of range name theirs.
TEST(ModelFile, BadMlaKeysNameTheirLine) {
  EXPECT_EQ(model_error("model-mla-keys",
                        std::string(kTinyModel) +
                            "mla:\n  q_lora_rank: 64\n  kv_lora_rnk: 32\n  qk_nope_head_dim: 16\n"
                            "  qk_rope_head_dim: -1\n  v_head_dim: 16\n"),
            "m.yaml:12: unknown key 'kv_lora_rnk' in mla (did you mean 'kv_lora_rank'?); expected "
            "one of q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, "
            "attention_pad_head_dim\n"
            "m.yaml: mla: missing key 'kv_lora_rank'\n"
            "m.yaml:14: 'qk_rope_head_dim' must be a whole number from 0 to 1000000000, got '-1'");
  EXPECT_EQ(model_error("model-mla-list", std::string(kTinyModel) + "mla: [1, 2]\n"),
            "m.yaml:10: 'mla' must be a map of q_lora_rank, kv_lora_rank, qk_nope_head_dim, "
            "qk_rope_head_dim, v_head_dim, attention_pad_head_dim");
}

// What cannot go together: head_dim with mla (MLA has its own head widths), mla with fewer KV
// heads than heads, a node limit above top_k, a zero head_dim, a negative mtp_layers.
TEST(ModelFile, ArchitectureKeysThatContradict) {
  const std::string mla =
      "mla: {kv_lora_rank: 32, qk_nope_head_dim: 16, qk_rope_head_dim: 8, v_head_dim: 16}\n";
  EXPECT_EQ(model_error("model-arch-mix",
                        "name: x\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 2\nffn_hidden: 1024\n"
                        "vocab: 1000\nseq_len: 512\nffn_type: gelu\nhead_dim: 32\n" + mla +
                            "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 128, "
                            "max_nodes_per_token: 3}\n"),
            "m.yaml: moe: max_nodes_per_token 3 exceeds top_k 2 (a token's experts are on at most "
            "top_k nodes)\n"
            "m.yaml: head_dim and mla exclude each other (MLA's head widths are qk_nope_head_dim + "
            "qk_rope_head_dim and v_head_dim)\n"
            "m.yaml: with mla, kv_heads 2 must equal heads 8 (MLA up-projects K and V for every "
            "head)");
  EXPECT_EQ(model_error("model-arch-range",
                        std::string(kTinyModel) + "head_dim: 0\nmtp_layers: -1\n"),
            "m.yaml:10: 'head_dim' must be a whole number from 1 to 1000000000, got '0'\n"
            "m.yaml:11: 'mtp_layers' must be a whole number from 0 to 1000000, got '-1'");
}

// A directory given as a model file: one line, not the C++ library's basic_filebuf text.
TEST(ModelFile, DirectoryIsOneLine) {
  const std::string dir = test::temp_dir("model-dir");
  try {
    load_model(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": is a directory, not a model file");
  }
}

}  // namespace
}  // namespace plumb::plan
