// The model catalog in data/models/: every file loads, and the parameters its shapes imply match
// the count its source publishes.
#include <gtest/gtest.h>

#include <filesystem>

#include "plan/model.h"

namespace plumb::plan {
namespace {

// Published counts are rounded (Megatron's Table 1 to one decimal: 1.7B computes to 1.65B) and
// leave small parts out (biases, position embeddings, DeepSeek-V3's multi-token module).
constexpr double kTolerance = 0.035;

TEST(ModelCatalog, EveryModelLoadsAndMatchesItsPublishedCount) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUMB_DATA_DIR "/models")) {
    if (entry.path().extension() != ".yaml") continue;
    const ModelSpec m = load_model(entry.path().string());
    ASSERT_GT(m.params_b, 0) << entry.path() << " has no params_b";
    const double computed = static_cast<double>(parameter_count(m)) / 1e9;
    EXPECT_NEAR(computed / m.params_b, 1.0, kTolerance)
        << entry.path() << ": " << computed << "B computed, " << m.params_b << "B published";
    ++models;
  }
  EXPECT_GE(models, 16);  // GPT-3, ten Megatron sizes, three Llama 3, Mixtral, DeepSeek-V3
}

}  // namespace
}  // namespace plumb::plan
