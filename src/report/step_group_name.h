// How plumb step names a process group, the console summary and the HTML page alike
// (docs/step.md, "Group names"). A profiler often names a group by an id it made up -- PyTorch by
// a counter ("0", "3") or a SHA-1 of the ranks, HCCL by a communicator id ("17522688603477080586",
// "10.0.0.1%eth0_60000_0_1712345678") -- which tells a reader nothing; such a group is named by
// its ranks instead, or "world" when it holds every rank of a known world. A name a person gave
// ("dp", "tp", "default_pg", "mesh_ep") is kept.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::report {

// True for an id a profiler made up: all digits, an '%' (HCCL's "address%interface_..."), or 16
// or more hexadecimal digits (PyTorch's hashed names).
bool made_up_group_name(std::string_view group);

// The group's role for a reader: its own name when a person gave it; "world" when it holds ranks
// 0 .. world_size−1 (world_size > 0); "ranks" when only its ranks are known; "" when neither
// (the analysis then takes the group to be the whole world).
std::string group_role(const std::string& group, const std::vector<int>& ranks, int world_size);

}  // namespace plumb::report
