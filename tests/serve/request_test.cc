#include "serve/request.h"

#include <gtest/gtest.h>

namespace plumb::serve {
namespace {

TEST(ServeRequest, ErrorKindsHaveTheNamesTheJsonUses) {
  std::vector<std::string> names;
  for (ErrorKind kind : error_kinds()) names.emplace_back(error_kind_name(kind));
  EXPECT_EQ(names, (std::vector<std::string>{"connect", "http_status", "timeout", "dropped",
                                             "malformed", "server"}));
  EXPECT_EQ(error_kind_name(ErrorKind::none), "none");
  EXPECT_EQ(token_source_name(TokenSource::usage), "usage");
  EXPECT_EQ(token_source_name(TokenSource::chunks), "chunks");
}

TEST(ServeRequest, ARecordIsOkOnlyWithoutAnError) {
  RequestRecord record;
  EXPECT_TRUE(record.ok());
  record.error = ErrorKind::dropped;
  EXPECT_FALSE(record.ok());
}

}  // namespace
}  // namespace plumb::serve
