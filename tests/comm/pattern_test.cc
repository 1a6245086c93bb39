#include "comm/pattern.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace plumb::comm {
namespace {

// A value is exact in `type` when storing and loading it gives it back.
bool exact(DataType type, double v) {
  unsigned char buffer[8];
  store(type, buffer, 0, v);
  return load(type, buffer, 0) == v;
}

struct Case {
  DataType type;
  ReduceOp op;
  int ranks;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const DataTypeInfo& t : all_data_types()) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin,
                        ReduceOp::kAvg}) {
      for (int n : {1, 2, 3, 8, 100, 1000}) cases.push_back({t.type, op, n});
    }
  }
  return cases;
}

// The closed form reduced() equals the reduction computed rank by rank, and every input and
// result is exact in the type -- so no reduction order can change a result.
TEST(Pattern, ClosedFormMatchesReferenceAndStaysExact) {
  for (const Case& c : all_cases()) {
    const Pattern p(c.type, c.op, c.ranks);
    for (size_t i = 0; i < 300; ++i) {
      double acc = p.value(0, i);
      ASSERT_TRUE(exact(c.type, acc));
      for (int r = 1; r < c.ranks; ++r) {
        const double v = p.value(r, i);
        ASSERT_TRUE(exact(c.type, v)) << info(c.type).name << " " << name(c.op) << " n=" << c.ranks;
        acc = combine(c.op, acc, v);
        ASSERT_TRUE(exact(c.type, acc)) << "partial result leaves the exact range";
      }
      if (c.op == ReduceOp::kAvg) acc /= c.ranks;
      ASSERT_EQ(p.reduced(i), acc) << info(c.type).name << " " << name(c.op) << " n=" << c.ranks
                                   << " i=" << i;
      ASSERT_TRUE(exact(c.type, p.reduced(i)));
    }
  }
}

TEST(Pattern, DependsOnRankAndIndex) {
  for (const DataTypeInfo& t : all_data_types()) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin,
                        ReduceOp::kAvg}) {
      const Pattern p(t.type, op, 4);
      std::set<double> results;
      bool rank_dependent = false;
      for (size_t i = 0; i < 12; ++i) {
        results.insert(p.reduced(i));
        if (p.value(0, i) != p.value(1, i)) rank_dependent = true;
      }
      EXPECT_GE(results.size(), 2u) << t.name << " " << name(op);
      EXPECT_TRUE(rank_dependent) << t.name << " " << name(op);
    }
    const Pattern plain(t.type, 4);
    EXPECT_NE(plain.value(0, 5), plain.value(1, 5));
    EXPECT_NE(plain.value(0, 5), plain.value(0, 6));
  }
}

TEST(Pattern, ToleranceOnlyForPremultipliedFloatAvgOnOddRankCounts) {
  EXPECT_EQ(Pattern(DataType::kFloat32, ReduceOp::kAvg, 3).tolerance(5, false), 0.0);
  EXPECT_EQ(Pattern(DataType::kFloat32, ReduceOp::kAvg, 4).tolerance(5, true), 0.0);
  EXPECT_EQ(Pattern(DataType::kInt32, ReduceOp::kAvg, 3).tolerance(5, true), 0.0);
  EXPECT_EQ(Pattern(DataType::kFloat32, ReduceOp::kSum, 3).tolerance(5, true), 0.0);
  // n·(|x| + 1)·2/max_exact = 3 · 6 · 2 / 2^24
  EXPECT_DOUBLE_EQ(Pattern(DataType::kFloat32, ReduceOp::kAvg, 3).tolerance(5, true),
                   36.0 / 16777216.0);
}

}  // namespace
}  // namespace plumb::comm
