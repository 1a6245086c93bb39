// The table of collectives. Adding one: write <name>.cc filling Collective, declare its
// accessor in collective.h, and list it here.
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "comm/collective.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {
namespace {

// "all_reduce_perf" -> "allreduce": nccl-tests' binary and function names map to plumb's.
std::string normalize(std::string_view name) {
  std::string out(name);
  if (out.ends_with("_perf")) out.resize(out.size() - 5);
  std::erase(out, '_');
  std::erase(out, '-');
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Counts whole_counts(size_t bytes, size_t element_size) {
  const size_t count = bytes / element_size;
  return {count, count, count, count * element_size};
}

size_t per_rank_count(size_t bytes, size_t element_size, int nranks) {
  return bytes / element_size / static_cast<size_t>(nranks);
}

std::span<const Collective* const> all_collectives() {
  static const std::array<const Collective*, 7> kTable = {
      &allreduce_collective(), &allgather_collective(), &reducescatter_collective(),
      &alltoall_collective(),  &broadcast_collective(), &reduce_collective(),
      &sendrecv_collective(),
  };
  return kTable;
}

const Collective& find_collective(std::string_view name, std::string_view where) {
  const std::string wanted = normalize(name);
  std::vector<std::string> names;
  for (const Collective* c : all_collectives()) {
    if (c->name() == wanted) return *c;
    names.emplace_back(c->name());
  }
  throw Error(unknown_name(where, "collective", name, names, wanted));
}

}  // namespace plumb::comm
