#include <gtest/gtest.h>

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>

#include "cli/baseline_workload.h"
#include "common/environment.h"
#include "common/error.h"

namespace plumb::cli {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "(no error)";
}

TEST(BaselineWorkload, SkipTakesThePartsOfTheSet) {
  EXPECT_EQ(parse_skip(""), std::set<std::string>());
  EXPECT_EQ(parse_skip("recovery"), std::set<std::string>({"recovery"}));
  EXPECT_EQ(parse_skip("comm,model,memory,recovery"),
            std::set<std::string>({"comm", "model", "memory", "recovery"}));
}

TEST(BaselineWorkload, AnUnknownPartNamesTheValidOnes) {
  EXPECT_EQ(error_of([] { parse_skip("comm,topo"); }),
            "--skip 'comm,topo': unknown part 'topo'; the parts are comm, model, memory, recovery");
}

TEST(BaselineWorkload, ProfileWindowInsideTheSteps) {
  const ProfileWindow w = parse_profile_steps("10:3", 20);
  EXPECT_EQ(w.start, 10);
  EXPECT_EQ(w.count, 3);
  EXPECT_EQ(parse_profile_steps("18:3", 20).count, 3);
}

TEST(BaselineWorkload, BadProfileWindows) {
  EXPECT_EQ(error_of([] { parse_profile_steps("10", 20); }),
            "--profile-steps '10': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("a:3", 20); }),
            "--profile-steps 'a:3': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("3:2x", 20); }),
            "--profile-steps '3:2x': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("0:3", 20); }),
            "--profile-steps '0:3': START and COUNT must be at least 1");
  EXPECT_EQ(error_of([] { parse_profile_steps("19:3", 20); }),
            "--profile-steps '19:3': the window ends at step 21, after --steps 20");
}

// The port is free: it can be bound again at once.
TEST(BaselineWorkload, FreePortCanBeBound) {
  const int port = free_port();
  ASSERT_GT(port, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
}

TEST(BaselineWorkload, MasterAddress) {
  const char* saved = getenv("MASTER_ADDR");
  const std::string before = saved ? saved : "";
  unsetenv("MASTER_ADDR");
  BaselineOptions o;
  EXPECT_EQ(master_address(o), "127.0.0.1");  // the ranks on this host alone
  o.launcher = "srun -N 2";
  EXPECT_EQ(master_address(o), host_name());  // ranks elsewhere meet at this host
  setenv("MASTER_ADDR", "node7", 1);
  EXPECT_EQ(master_address(o), "");           // the environment's, left as it is
  if (saved) {
    setenv("MASTER_ADDR", before.c_str(), 1);
  } else {
    unsetenv("MASTER_ADDR");
  }
}

}  // namespace
}  // namespace plumb::cli
