// The interface each checkpoint format fills (checkpoint_formats.cc holds the four and their
// table): `list` names the checkpoints the format sees in the directory, newest or not, with
// what its pointer file says of each; `check` says why one is not complete ("" when it is).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::supervise {

// One entry of the checkpoint directory, read once.
struct DirEntry {
  std::string name;
  bool is_directory = false;
  bool is_file = false;
};

struct Listing {
  std::filesystem::path root;
  std::vector<DirEntry> entries;  // sorted by name
};

struct Candidate {
  std::filesystem::path path;
  std::optional<int64_t> step;
  std::string pointer;  // "latest_checkpointed_iteration.txt says 300" when a pointer names it
  std::string verdict;  // a reason already known from the listing ("newer than the pointer")
};

struct CheckpointFormat {
  std::string_view name;
  std::vector<Candidate> (*list)(const Listing& listing);
  std::string (*check)(const Listing& listing, const Candidate& candidate);
};

// Megatron-LM, DeepSpeed, PyTorch Distributed Checkpoint, plumb's manifest: in this order a
// folder claimed by an earlier format is not listed again by a later one.
std::span<const CheckpointFormat> checkpoint_formats();

// The step a checkpoint folder's name ends with: "iter_0000300" -> 300, "global_step1000" ->
// 1000, "step_1200" -> 1200; none for "final" or "release".
std::optional<int64_t> step_in_name(std::string_view name);

// What a pointer file says, read from its text alone (fuzz/checkpoint_tracker_fuzz.cc feeds these
// any bytes): the step it names and its trimmed text, or why it cannot be used.
struct PointerText {
  std::optional<int64_t> step;
  std::string said;
  std::string problem;  // "latest_checkpointed_iteration.txt holds \"abc\", not an iteration ..."
};
// Megatron-LM's latest_checkpointed_iteration.txt: "release" (step 0) or an iteration > 0.
PointerText read_megatron_tracker_text(std::string_view text);
// DeepSpeed's latest: the name of a checkpoint folder ("global_step1000"), the step its number.
PointerText read_deepspeed_latest_text(std::string_view text);

// How messages name a candidate: its path relative to the checkpoint directory, or the
// directory's own path when the directory itself is the checkpoint.
std::string display_name(const Listing& listing, const std::filesystem::path& path);
// What goes before a file name inside the candidate: "step_1200/", or "" for the directory.
std::string display_prefix(const Listing& listing, const std::filesystem::path& path);

}  // namespace plumb::supervise
