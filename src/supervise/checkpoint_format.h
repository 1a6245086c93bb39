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

// How messages name a candidate: its path relative to the checkpoint directory, or the
// directory's own path when the directory itself is the checkpoint.
std::string display_name(const Listing& listing, const std::filesystem::path& path);
// What goes before a file name inside the candidate: "step_1200/", or "" for the directory.
std::string display_prefix(const Listing& listing, const std::filesystem::path& path);

}  // namespace plumb::supervise
