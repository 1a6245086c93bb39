#include "check/status.h"

#include <gtest/gtest.h>

namespace plumb::check {
namespace {

TEST(CheckStatus, FoldsAsTheMonitoringPluginsDo) {
  EXPECT_EQ(worse(Status::kOk, Status::kUnknown), Status::kUnknown);
  EXPECT_EQ(worse(Status::kUnknown, Status::kWarning), Status::kWarning);
  EXPECT_EQ(worse(Status::kWarning, Status::kUnknown), Status::kWarning);
  EXPECT_EQ(worse(Status::kCritical, Status::kWarning), Status::kCritical);
  EXPECT_EQ(worse(Status::kOk, Status::kOk), Status::kOk);
}

TEST(CheckStatus, ExitCodesAndNamesFollowTheConvention) {
  EXPECT_EQ(exit_code(Status::kOk), 0);
  EXPECT_EQ(exit_code(Status::kWarning), 1);
  EXPECT_EQ(exit_code(Status::kCritical), 2);
  EXPECT_EQ(exit_code(Status::kUnknown), 3);
  EXPECT_EQ(status_name(Status::kCritical), "critical");
  EXPECT_EQ(parse_status("warning"), Status::kWarning);
  EXPECT_FALSE(parse_status("WARN").has_value());
}

}  // namespace
}  // namespace plumb::check
