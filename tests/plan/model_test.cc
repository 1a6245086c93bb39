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
                     "tied_embeddings, params_b, moe");
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
                     "first_dense_layers");
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
