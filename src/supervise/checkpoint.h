// Which checkpoint a restarted job resumes from (docs/run.md, "Checkpoints"). A table of formats,
// one small strategy each (Megatron-LM, DeepSpeed, PyTorch Distributed Checkpoint, plumb's own
// manifest), lists the checkpoints a directory holds; the newest complete one wins, and every
// newer one that is partial or corrupt is skipped with the reason. Nothing in the directory is
// ever written: files are opened read-only and no temporary file is made there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "supervise/checkpoint_manifest.h"

namespace plumb::supervise {

// The manifest `seal_checkpoint` writes and `find_checkpoint` verifies when a checkpoint holds
// one.
inline constexpr const char* kManifestName = "plumb-checkpoint.json";
inline constexpr const char* kManifestSchema = "plumb.checkpoint/1";

struct SkippedCheckpoint {
  std::filesystem::path path;
  // Names the files relative to the checkpoint directory:
  // "iter_0000300: latest_checkpointed_iteration.txt says 300 but the directory is empty".
  std::string reason;
};

struct CheckpointChoice {
  std::filesystem::path path;   // empty when no complete checkpoint was found
  std::optional<int64_t> step;  // none when the format gives no step (a DCP folder "final")
  std::string format;           // "megatron", "deepspeed", "dcp" or "plumb"
  std::vector<SkippedCheckpoint> skipped;  // newest first, every one newer than `path`
};

// The newest complete checkpoint in `dir`. A missing, unreadable or non-directory `dir` is an
// Error naming it (exit 2); a directory without any complete checkpoint gives an empty path and
// the reasons.
CheckpointChoice find_checkpoint(const std::filesystem::path& dir);

// Writes `dir`/plumb-checkpoint.json (schema plumb.checkpoint/1): the step and every regular file
// under `dir` with its path relative to `dir`, its size and its SHA-256, written whole or not at
// all. A missing or unreadable `dir`, a negative step, an unreadable file, a file that changed
// while it was hashed (make_manifest; `after_hash` is its test hook) or a folder with no file to
// list is an Error, and nothing is written.
void seal_checkpoint(const std::filesystem::path& dir, int64_t step, const AfterHash& after_hash = {});

}  // namespace plumb::supervise
