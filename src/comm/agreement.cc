#include "comm/agreement.h"

#include <mpi.h>

#include <fmt/format.h>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/error.h"

namespace plumb::comm {
namespace {

constexpr char kSeparator = '\x1f';  // ASCII unit separator: never in a message

struct Failure {
  int code = 0;
  std::string host;
  std::string message;
};

std::string encode(int code, const std::string& message) {
  return fmt::format("{}{}{}{}{}", code, kSeparator, host_name(), kSeparator, message);
}

Failure decode(const std::string& text) {
  const size_t a = text.find(kSeparator);
  const size_t b = text.find(kSeparator, a + 1);
  return {std::stoi(text.substr(0, a)), text.substr(a + 1, b - a - 1), text.substr(b + 1)};
}

}  // namespace

void agree(Communicator& comm, const std::function<void()>& step) {
  std::string mine;
  try {
    step();
  } catch (const Error& e) {
    mine = encode(static_cast<int>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    mine = encode(static_cast<int>(ExitCode::kBadInput), "out of memory");
  } catch (const std::exception& e) {
    mine = encode(static_cast<int>(ExitCode::kBadInput), fmt::format("unexpected error: {}", e.what()));
  }
  const std::vector<std::string> all = comm.all_gather_strings(mine);
  int first = -1;
  int failed = 0;
  bool alike = true;
  Failure f;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    ++failed;
    if (first < 0) {
      first = static_cast<int>(r);
      f = decode(all[r]);
    } else if (decode(all[r]).message != f.message) {
      alike = false;
    }
  }
  if (first < 0) return;
  const auto ranks = static_cast<int>(all.size());
  if (alike && failed == ranks) throw Error(f.message, static_cast<ExitCode>(f.code));
  throw Error(fmt::format("rank {} on host {}: {} ({} of {} ranks failed)", first, f.host,
                          f.message, failed, ranks),
              static_cast<ExitCode>(f.code));
}

void abort_all(int exit_code, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fmt::print(stderr, "plumb: error: rank {} on host {}: {}\n", rank, host_name(), message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

int exit_agreed(Communicator& comm, const Error& error) {
  if (comm.rank() == 0) {
    fmt::print(stderr, "plumb: error: {}\n", error.what());
    std::fflush(stderr);
  }
  comm.barrier();
  return static_cast<int>(error.code());
}

}  // namespace plumb::comm
