// The checkpoint formats plumb recognises, one strategy each, and their table (docs/run.md,
// "Checkpoints"). Megatron-LM and DeepSpeed write a pointer file once a save completes, so a
// folder newer than the pointer is an interrupted save; DCP writes .metadata last.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <system_error>

#include "common/strings.h"
#include "supervise/checkpoint.h"
#include "supervise/checkpoint_format.h"
#include "supervise/checkpoint_manifest.h"

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPointerLimitBytes = 4096;  // a step number or a folder name
// Megatron-LM, megatron/training/checkpointing.py: get_checkpoint_tracker_filename,
// read_metadata ("release" or an iteration > 0), get_checkpoint_name ("iter_{:07d}", "release").
constexpr std::string_view kMegatronTracker = "latest_checkpointed_iteration.txt";
constexpr std::string_view kMegatronIterPrefix = "iter_";
constexpr std::string_view kMegatronRelease = "release";
// DeepSpeed, runtime/engine.py: save_checkpoint writes the tag ("global_step{N}") to `latest`
// after the files; _get_ckpt_name names each model-parallel rank's "*model_states.pt".
constexpr std::string_view kDeepSpeedLatest = "latest";
constexpr std::string_view kDeepSpeedStepPrefix = "global_step";
constexpr std::string_view kDeepSpeedModelStates = "model_states.pt";
// torch.distributed.checkpoint FileSystemWriter: "__{rank}_{i}.distcp" data, ".metadata" last.
constexpr std::string_view kDcpMetadata = ".metadata";
constexpr std::string_view kDcpDataSuffix = ".distcp";

std::optional<int64_t> parse_digits(std::string_view digits) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      digits.front() == '-') {
    return std::nullopt;
  }
  return value;
}

// "iter_0000300" with prefix "iter_" -> 300.
std::optional<int64_t> number_after(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  return parse_digits(name.substr(prefix.size()));
}

// "step_1200", "checkpoint-1200", "global_step1200" -> 1200; "final" -> none.
std::optional<int64_t> trailing_number(std::string_view name) {
  size_t start = name.size();
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  return parse_digits(name.substr(start));
}

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

bool has_file(const Listing& listing, std::string_view name) {
  return std::any_of(listing.entries.begin(), listing.entries.end(),
                     [&](const DirEntry& e) { return e.is_file && e.name == name; });
}

// What a pointer file says: the newest complete step (`step`, spelled `said`), or why it cannot.
using Bound = PointerText;

// The pointer file's text, trimmed, or the problem in `bound`.
std::string read_pointer(const Listing& listing, std::string_view name, std::string_view writer,
                         Bound& bound) {
  if (!has_file(listing, name)) {
    bound.problem = fmt::format("no {} file: {} writes it once a save completes", name, writer);
    return "";
  }
  const TextRead read = read_text(listing.root / name, kPointerLimitBytes);
  if (!read.problem.empty()) bound.problem = fmt::format("{}: {}", name, read.problem);
  return std::string(trim(read.text));
}

// Folders newer than the pointer are interrupted saves; without a pointer none can be trusted.
void apply_bound(const Listing& listing, std::vector<Candidate>& candidates, const Bound& bound,
                 std::string_view pointer) {
  for (Candidate& c : candidates) {
    const std::string name = display_name(listing, c.path);
    if (!bound.problem.empty()) {
      c.verdict = fmt::format("{}: {}", name, bound.problem);
    } else if (bound.step && c.step && *c.step > *bound.step) {
      c.verdict = fmt::format("{} is newer than {} ({}): an interrupted save?", name, pointer,
                              bound.said);
    }
  }
}

// Marks the folder the pointer names, adding it when it is not there (check() then says so).
void point_at(const Listing& listing, std::vector<Candidate>& candidates, const std::string& folder,
              std::optional<int64_t> step, std::string pointer) {
  const fs::path path = listing.root / folder;
  auto it = std::find_if(candidates.begin(), candidates.end(),
                         [&](const Candidate& c) { return c.path == path; });
  if (it == candidates.end()) {
    candidates.push_back({path, step, "", ""});
    it = candidates.end() - 1;
  }
  it->pointer = std::move(pointer);
}

std::vector<Candidate> numbered_folders(const Listing& listing, std::string_view prefix) {
  std::vector<Candidate> candidates;
  for (const DirEntry& e : listing.entries) {
    if (!e.is_directory) continue;
    if (const auto step = number_after(e.name, prefix)) {
      candidates.push_back({listing.root / e.name, step, "", ""});
    }
  }
  return candidates;
}

// "iter_0000200 is empty", or with a pointer "iter_0000300: latest_checkpointed_iteration.txt
// says 300 but the directory is empty".
std::string refuse(const Listing& listing, const Candidate& c, const std::string& problem) {
  const std::string name = display_name(listing, c.path);
  if (c.pointer.empty()) return fmt::format("{} {}", name, problem);
  return fmt::format("{}: {} but the directory {}", name, c.pointer, problem);
}

// "" when `path` is a readable directory, else how it is not.
std::string folder_problem(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return "is missing";
  if (ec) return fmt::format("cannot be read ({})", ec.message());
  if (!fs::is_directory(status)) return "is not a directory";
  return "";
}

// "" when `folder` holds a non-empty regular file at any depth, else what it holds instead.
std::string content_problem(const fs::path& folder) {
  if (std::string problem = folder_problem(folder); !problem.empty()) return problem;
  std::error_code ec;
  bool any = false;
  fs::recursive_directory_iterator it(folder, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    any = true;
    std::error_code file_ec;
    if (it->is_regular_file(file_ec) && it->file_size(file_ec) > 0 && !file_ec) return "";
  }
  if (ec) return fmt::format("cannot be read ({})", ec.message());
  return any ? "holds only empty files" : "is empty";
}

// ---- Megatron-LM: latest_checkpointed_iteration.txt + iter_NNNNNNN/ (or release/) ----

Bound read_megatron_tracker(const Listing& listing) {
  Bound bound;
  bound.said = read_pointer(listing, kMegatronTracker, "Megatron-LM", bound);
  if (!bound.problem.empty()) return bound;
  return read_megatron_tracker_text(bound.said);
}

std::vector<Candidate> list_megatron(const Listing& listing) {
  std::vector<Candidate> candidates = numbered_folders(listing, kMegatronIterPrefix);
  const bool has_tracker = std::any_of(listing.entries.begin(), listing.entries.end(),
                                       [](const DirEntry& e) { return e.name == kMegatronTracker; });
  // Megatron-DeepSpeed writes the tracker beside DeepSpeed's `latest` and global_stepN/ folders:
  // without an iter_ folder, those are DeepSpeed's to judge.
  const bool deepspeed_saves = has_file(listing, kDeepSpeedLatest);
  if (candidates.empty() && (!has_tracker || deepspeed_saves)) return {};
  const Bound bound = read_megatron_tracker(listing);
  apply_bound(listing, candidates, bound, kMegatronTracker);
  if (!bound.problem.empty()) return candidates;
  const std::string folder = bound.said == kMegatronRelease
                                 ? std::string(kMegatronRelease)
                                 : fmt::format("iter_{:07d}", *bound.step);
  point_at(listing, candidates, folder, bound.step,
           fmt::format("{} says {}", kMegatronTracker, bound.said));
  return candidates;
}

bool looks_like_dcp(const fs::path& folder);
std::string check_dcp(const Listing& listing, const Candidate& c);

// An iteration saved with --ckpt-format torch_dist is a DCP folder: DCP's rule holds as well.
std::string check_megatron(const Listing& listing, const Candidate& c) {
  if (!c.verdict.empty()) return c.verdict;
  const std::string problem = content_problem(c.path);
  if (!problem.empty()) return refuse(listing, c, problem);
  return looks_like_dcp(c.path) ? check_dcp(listing, c) : "";
}

// ---- DeepSpeed: latest + global_stepN/ holding *model_states.pt ----

std::vector<Candidate> list_deepspeed(const Listing& listing) {
  std::vector<Candidate> candidates = numbered_folders(listing, kDeepSpeedStepPrefix);
  if (candidates.empty() && !has_file(listing, kDeepSpeedLatest)) return {};
  Bound read;
  const std::string tag = read_pointer(listing, kDeepSpeedLatest, "DeepSpeed", read);
  // Without a global_stepN/ folder, a `latest` that names another kind of folder is another
  // tool's pointer (a DCP step_N/ folder), not DeepSpeed's.
  if (candidates.empty() && !tag.starts_with(kDeepSpeedStepPrefix)) return {};
  const Bound bound = read.problem.empty() ? read_deepspeed_latest_text(tag) : read;
  apply_bound(listing, candidates, bound, kDeepSpeedLatest);
  if (bound.problem.empty()) {
    point_at(listing, candidates, tag, bound.step, fmt::format("{} says {}", kDeepSpeedLatest, tag));
  }
  return candidates;
}

std::string check_deepspeed(const Listing& listing, const Candidate& c) {
  if (!c.verdict.empty()) return c.verdict;
  if (std::string problem = folder_problem(c.path); !problem.empty()) {
    return refuse(listing, c, problem);
  }
  std::error_code ec;
  std::vector<std::string> empty;
  size_t found = 0;
  fs::directory_iterator it(c.path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code file_ec;
    if (!name.ends_with(kDeepSpeedModelStates) || !it->is_regular_file(file_ec)) continue;
    ++found;
    if (it->file_size(file_ec) == 0) empty.push_back(display_prefix(listing, c.path) + name);
  }
  if (ec) return refuse(listing, c, fmt::format("cannot be read ({})", ec.message()));
  if (found == 0) return refuse(listing, c, fmt::format("holds no *{} file", kDeepSpeedModelStates));
  if (!empty.empty()) return fmt::format("{} is empty: an interrupted save?", join(empty, ", "));
  return "";
}

// ---- PyTorch Distributed Checkpoint: a folder of *.distcp files and .metadata ----

struct DcpFiles {
  bool metadata = false;
  uint64_t metadata_bytes = 0;
  size_t data_files = 0;
  std::string problem;
};

DcpFiles scan_dcp(const fs::path& folder) {
  DcpFiles files;
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    if (name == kDcpMetadata) {
      files.metadata = true;
      files.metadata_bytes = it->file_size(file_ec);
    } else if (name.ends_with(kDcpDataSuffix)) {
      ++files.data_files;
    }
  }
  if (ec) files.problem = fmt::format("cannot be read ({})", ec.message());
  return files;
}

bool looks_like_dcp(const fs::path& folder) {
  const DcpFiles files = scan_dcp(folder);
  return files.metadata || files.data_files > 0;
}

// The directory itself, or its sub-folders, with a step from the name's trailing number.
std::vector<Candidate> list_dcp(const Listing& listing) {
  if (looks_like_dcp(listing.root)) {
    return {{listing.root, trailing_number(listing.root.filename().string()), "", ""}};
  }
  std::vector<Candidate> candidates;
  for (const DirEntry& e : listing.entries) {
    if (e.is_directory && looks_like_dcp(listing.root / e.name)) {
      candidates.push_back({listing.root / e.name, trailing_number(e.name), "", ""});
    }
  }
  return candidates;
}

std::string check_dcp(const Listing& listing, const Candidate& c) {
  const DcpFiles files = scan_dcp(c.path);
  const std::string prefix = display_prefix(listing, c.path);
  if (!files.problem.empty()) return refuse(listing, c, files.problem);
  if (!files.metadata) return fmt::format("{}{} is missing: an interrupted save?", prefix, kDcpMetadata);
  if (files.metadata_bytes == 0) {
    return fmt::format("{}{} is empty: an interrupted save?", prefix, kDcpMetadata);
  }
  if (files.data_files == 0) {
    return refuse(listing, c, fmt::format("holds {} but no *{} file", kDcpMetadata, kDcpDataSuffix));
  }
  return "";
}

// ---- plumb's manifest: plumb-checkpoint.json in the directory or in its sub-folders ----

// A manifest that cannot be used (a manifest listing no file among them) still ranks by the number
// its folder's name ends with, so that it is named among the newer checkpoints skipped rather than
// ranked after every numbered one and never mentioned.
Candidate manifest_candidate(const Listing& listing, const fs::path& folder) {
  const ManifestRead read = read_manifest(folder, display_prefix(listing, folder));
  if (!read.manifest) return {folder, trailing_number(folder.filename().string()), "", read.problem};
  return {folder, read.manifest->step, "", ""};
}

std::vector<Candidate> list_plumb(const Listing& listing) {
  if (has_file(listing, kManifestName)) return {manifest_candidate(listing, listing.root)};
  std::vector<Candidate> candidates;
  for (const DirEntry& e : listing.entries) {
    std::error_code ec;
    if (e.is_directory && fs::is_regular_file(listing.root / e.name / kManifestName, ec)) {
      candidates.push_back(manifest_candidate(listing, listing.root / e.name));
    }
  }
  return candidates;
}

// The files are verified with every format's (find_checkpoint does it when a manifest is there).
std::string check_plumb(const Listing& /*listing*/, const Candidate& c) { return c.verdict; }

constexpr std::array kFormats = {
    CheckpointFormat{"megatron", list_megatron, check_megatron},
    CheckpointFormat{"deepspeed", list_deepspeed, check_deepspeed},
    CheckpointFormat{"dcp", list_dcp, check_dcp},
    CheckpointFormat{"plumb", list_plumb, check_plumb},
};

}  // namespace

std::span<const CheckpointFormat> checkpoint_formats() { return kFormats; }

std::optional<int64_t> step_in_name(std::string_view name) { return trailing_number(name); }

// read_metadata: "release" (iteration 0) or an iteration > 0.
PointerText read_megatron_tracker_text(std::string_view text) {
  PointerText bound;
  bound.said = std::string(trim(text));
  if (bound.said == kMegatronRelease) {
    bound.step = 0;
    return bound;
  }
  bound.step = parse_digits(bound.said);
  if (!bound.step || *bound.step <= 0) {
    bound.problem = fmt::format("{} holds \"{}\", not an iteration number or \"{}\"",
                                kMegatronTracker, terminal_safe(bound.said), kMegatronRelease);
  }
  return bound;
}

// save_checkpoint writes the tag, a folder name beside `latest`.
PointerText read_deepspeed_latest_text(std::string_view text) {
  PointerText bound;
  bound.said = std::string(trim(text));
  const std::string& tag = bound.said;
  if (tag.empty() || tag == "." || tag == ".." || tag.find('/') != std::string::npos) {
    bound.problem = fmt::format("{} holds \"{}\", not the name of a checkpoint folder",
                                kDeepSpeedLatest, terminal_safe(tag));
  }
  bound.step = trailing_number(tag);
  return bound;
}

std::string display_name(const Listing& listing, const fs::path& path) {
  const fs::path relative = path.lexically_relative(listing.root);
  return relative.empty() || relative == "." ? listing.root.string() : relative.generic_string();
}

std::string display_prefix(const Listing& listing, const fs::path& path) {
  const fs::path relative = path.lexically_relative(listing.root);
  return relative.empty() || relative == "." ? "" : relative.generic_string() + "/";
}

}  // namespace plumb::supervise
