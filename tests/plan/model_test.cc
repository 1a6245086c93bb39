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
              path + ":2: 'layers' must be positive\n" +
              path + ":7: 'vocab' has the wrong type\n" +
              path + ": missing key 'seq_len'\n" +
              path + ": ffn_type 'relu': expected gelu or swiglu\n" +
              path + ": heads 8 is not a multiple of kv_heads 3");
  }
  try {
    load_model(path + ".missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ".missing: cannot read the model file");
  }
}

}  // namespace
}  // namespace plumb::plan
