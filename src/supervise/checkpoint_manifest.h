// plumb's checkpoint manifest, plumb-checkpoint.json (schema plumb.checkpoint/1): the step and,
// for every file of the checkpoint, its path relative to the manifest's folder, its size and its
// SHA-256. `seal_checkpoint` (checkpoint.h) writes it; these read and verify it, read-only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace plumb::supervise {

struct ManifestFile {
  std::string path;  // relative, "/"-separated, never leaving the folder
  uint64_t size = 0;
  std::string sha256;  // 64 lowercase hex digits
};

struct Manifest {
  int64_t step = 0;
  std::vector<ManifestFile> files;
};

// The manifest in `folder`, or every problem with it in `problem`, naming the manifest as
// `prefix` + "plumb-checkpoint.json" ("iter_0000300/plumb-checkpoint.json: ...").
struct ManifestRead {
  std::optional<Manifest> manifest;
  std::string problem;
};
ManifestRead read_manifest(const std::filesystem::path& folder, const std::string& prefix);

// "" when every listed file exists with the listed size and SHA-256; else every difference,
// joined by "; " ("model.pt: SHA-256 differs from plumb-checkpoint.json"). Sizes are compared
// first, so that a truncated file is reported without reading the others; a file that changed
// while it was hashed is named as such. read_manifest refuses a manifest listing no file.
std::string verify_manifest(const std::filesystem::path& folder, const std::string& prefix,
                            const Manifest& manifest);

// Called with a file's path once its bytes were hashed, before it is looked at again: tests change
// the file there to stand for a job still writing it.
using AfterHash = std::function<void(const std::filesystem::path&)>;

// The manifest of every regular file under `folder` but the manifest itself, sorted by path.
// An unreadable file or folder is an Error naming it, and so is a file that changed while it was
// hashed: its size, modification time or inode after the last byte differ from before the first.
Manifest make_manifest(const std::filesystem::path& folder, int64_t step, const AfterHash& after_hash = {});

// The JSON text of a manifest (one file per line), ending with a newline.
std::string manifest_json(const Manifest& manifest);

// Reads a small text file whole ("" in `problem` when it was read), for pointer files and
// manifests; nothing is written.
struct TextRead {
  std::string text;
  std::string problem;  // "cannot read: Permission denied", "is larger than 4096 bytes"
};
TextRead read_text(const std::filesystem::path& path, uint64_t limit);

}  // namespace plumb::supervise
