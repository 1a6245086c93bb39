// Slurm hostlist expressions: "node[01-16]", "gpu[1-3,7],cpu5", "rack[1-2]-n[01-04]".
//
// The syntax is Slurm's (slurm.schedmd.com/topology.conf.html: "Slurm's hostlist expression parser
// is used, so the node and switch names need not be consecutive (e.g. Nodes=tux[0-3,12,18-20])"):
// names separated by commas outside brackets; inside brackets, comma-separated numbers and ranges
// lo-hi; a range is zero-padded to the width of its lower bound ("[08-10]" gives 08, 09, 10); several
// bracket groups in one name expand as their product, the last group varying fastest.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::topo {

// The most names one expression may expand to: 2^20, sixteen times Slurm's own limit on one range
// (MAX_RANGE, 64K hosts, src/common/hostlist.c) and far above the 100,000 accelerators of the
// largest clusters plumb is built for. A typo such as "n[0-99999999]" is refused, not allocated.
inline constexpr size_t kMaxHostlistNames = size_t{1} << 20;

// Every name, in order. Throws plumb::Error whose message names the bad part and says what was
// expected, without a file or line (the caller adds where the expression came from):
//   "bad range '01-1x' in a hostlist (expected numbers such as 01-16)".
std::vector<std::string> expand_hostlist(std::string_view text, size_t limit = kMaxHostlistNames);

// The shortest expression that expands to exactly `names`, in the same order: runs of names that
// differ only in their last number become one bracket group ("n01,n02,n03,n07" -> "n[01-03,07]").
// A name holding ',', '[', ']' or a blank cannot be written in a hostlist: plumb::Error naming it.
std::string compress_hostlist(std::span<const std::string> names);

}  // namespace plumb::topo
