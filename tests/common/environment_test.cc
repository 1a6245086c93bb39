#include "common/environment.h"

#include <gtest/gtest.h>

#include <regex>

namespace plumb {
namespace {

TEST(FilterEnvironment, KeepsSettingsDropsBookkeepingRedactsSecrets) {
  const std::vector<std::string> entries = {
      "NCCL_ALGO=Ring",
      "NCCL_IB_HCA=mlx5_0",
      "OMPI_COMM_WORLD_RANK=3",
      "OMPI_MCA_btl=self,vader",
      "OMPI_MCA_ess=pmi",
      "UCX_TLS=rc",
      "HCCL_BUFFSIZE=200",
      "HOME=/root",
      "NCCL_API_TOKEN=abc",
      "MALFORMED",
  };
  constexpr std::string_view prefixes[] = {"NCCL_", "HCCL_", "OMPI_", "UCX_"};
  const auto env = filter_environment(entries, prefixes);
  const std::map<std::string, std::string> expected = {
      {"HCCL_BUFFSIZE", "200"},   {"NCCL_ALGO", "Ring"},        {"NCCL_API_TOKEN", "<redacted>"},
      {"NCCL_IB_HCA", "mlx5_0"},  {"OMPI_MCA_btl", "self,vader"}, {"UCX_TLS", "rc"},
  };
  EXPECT_EQ(env, expected);
}

TEST(UtcTimestamp, Iso8601) {
  EXPECT_TRUE(std::regex_match(utc_timestamp(),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
}

}  // namespace
}  // namespace plumb
