#include "supervise/checkpoint.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/error.h"
#include "common/output_file.h"
#include "supervise/checkpoint_format.h"
#include "supervise/checkpoint_manifest.h"

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;

// "ckpt/" and "ckpt" name the same directory; messages and the DCP step use the last name.
fs::path without_trailing_separator(const fs::path& dir) {
  const fs::path normal = dir.lexically_normal();
  return normal.has_filename() || !normal.has_parent_path() ? normal : normal.parent_path();
}

// The directory's entries, read once; a directory that cannot be listed is an Error naming it.
Listing list_root(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw Error(fmt::format("{}: cannot read the checkpoint directory: {}", dir.string(),
                            std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(fmt::format("{}: not a directory; expected the checkpoint directory", dir.string()));
  }
  Listing listing{without_trailing_separator(dir), {}};
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    listing.entries.push_back({it->path().filename().string(), it->is_directory(type_ec),
                               it->is_regular_file(type_ec)});
  }
  if (ec) {
    throw Error(fmt::format("{}: cannot read the checkpoint directory: {}", dir.string(),
                            ec.message()));
  }
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return listing;
}

struct Ranked {
  Candidate candidate;
  size_t format = 0;  // index in checkpoint_formats()
};

// Newest first: known steps descending, then unknown steps; ties by format order and path.
bool newer(const Ranked& a, const Ranked& b) {
  const auto& x = a.candidate.step;
  const auto& y = b.candidate.step;
  if (x.has_value() != y.has_value()) return x.has_value();
  if (x && *x != *y) return *x > *y;
  if (a.format != b.format) return a.format < b.format;
  return a.candidate.path < b.candidate.path;
}

// Every format's candidates; a folder an earlier format claimed is not listed again.
std::vector<Ranked> rank_candidates(const Listing& listing) {
  const auto formats = checkpoint_formats();
  std::vector<Ranked> ranked;
  std::set<fs::path> claimed;
  for (size_t f = 0; f < formats.size(); ++f) {
    for (Candidate& c : formats[f].list(listing)) {
      if (claimed.insert(c.path).second) ranked.push_back({std::move(c), f});
    }
  }
  std::sort(ranked.begin(), ranked.end(), newer);
  return ranked;
}

// "" when complete: the format's own rule, then the manifest when the folder holds one.
std::string judge(const Listing& listing, const Ranked& r) {
  const Candidate& c = r.candidate;
  std::string reason = checkpoint_formats()[r.format].check(listing, c);
  std::error_code ec;
  if (!reason.empty() || !fs::is_regular_file(c.path / kManifestName, ec)) return reason;
  const std::string prefix = display_prefix(listing, c.path);
  const ManifestRead read = read_manifest(c.path, prefix);
  if (!read.manifest) return read.problem;
  return verify_manifest(c.path, prefix, *read.manifest);
}

}  // namespace

CheckpointChoice find_checkpoint(const fs::path& dir) {
  const Listing listing = list_root(dir);
  CheckpointChoice choice;
  for (const Ranked& r : rank_candidates(listing)) {
    std::string reason = judge(listing, r);
    if (reason.empty()) {
      choice.path = r.candidate.path;
      choice.step = r.candidate.step;
      choice.format = std::string(checkpoint_formats()[r.format].name);
      return choice;
    }
    choice.skipped.push_back({r.candidate.path, std::move(reason)});
  }
  return choice;
}

void seal_checkpoint(const fs::path& dir, int64_t step, const AfterHash& after_hash) {
  if (step < 0) throw Error(fmt::format("step {}: expected a whole number, 0 or more", step));
  list_root(dir);
  const Manifest manifest = make_manifest(dir, step, after_hash);
  if (manifest.files.empty()) {
    throw Error(fmt::format("{}: holds no file to seal (a checkpoint without files is not complete)", dir.string()));
  }
  write_output("the manifest", (dir / kManifestName).string(), manifest_json(manifest));
}

}  // namespace plumb::supervise
