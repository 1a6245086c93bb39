// The context half of `plumb diff`: every difference in topology, versions and settings between
// two records — the variables a change in the results could be attributed to — and the parts a
// record holds none of, which are not compared and never called "the same".
#pragma once

#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/store.h"

namespace plumb::baseline {

// Topology: hosts, rank count and, when both records hold a plumb.topo/1 record, each of its
// fields (more than kMaxTopologyFields differing fields are folded into one entry). Versions:
// plumb.env/1 "versions", when both hold them. Settings: the environment variables plumb.env/1
// captured (NCCL_*, HCCL_*, ...), the backend, the launcher (plumb.comm/1 "launcher", and srun's
// --mpi inside a Slurm job), and the sweep: the sizes, collectives and dtypes the rows hold, and
// the iterations, warm-up, rounds, op and check of the settings.
std::vector<VariableDiff> context_diffs(const Record& a, const Record& b);

// The parts of the context one record or both hold nothing of, in the words the context line
// uses: "no topology recorded in B: only the hosts and rank counts are compared",
// "no versions recorded in A or B", "no settings recorded in A". Empty when both hold all three.
std::vector<std::string> unrecorded_context(const Record& a, const Record& b);

// What `plumb diff` says of the context before listing its differences: "N difference(s)" or,
// with none, that the parts both records hold are the same — preceded by every unrecorded part.
// "topology, versions and settings are the same" only when both hold all three.
std::string context_headline(const std::vector<VariableDiff>& variables,
                             const std::vector<std::string>& unrecorded);

inline constexpr size_t kMaxTopologyFields = 12;

}  // namespace plumb::baseline
