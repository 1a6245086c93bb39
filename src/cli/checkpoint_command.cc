#include "cli/checkpoint_command.h"

#include <CLI/CLI.hpp>
#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.h"
#include "common/output_file.h"
#include "common/steady_time.h"
#include "common/units.h"
#include "supervise/checkpoint.h"
#include "supervise/checkpoint_format.h"
#include "supervise/checkpoint_manifest.h"

namespace plumb::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kFindSchema = "plumb.checkpoint-find/1";
constexpr double kBytesPerMB = 1e6;

// The same messages as find_checkpoint's, for every subcommand: DIR missing, not a directory,
// or not listable.
void check_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw Error(fmt::format("{}: cannot read the checkpoint directory: {}", dir,
                            std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(fmt::format("{}: not a directory; expected the checkpoint directory", dir));
  }
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) {
    throw Error(fmt::format("{}: cannot read the checkpoint directory: {}", dir,
                            std::strerror(errno)));
  }
  ::closedir(listing);
}

fs::path manifest_path(const std::string& dir) { return fs::path(dir) / supervise::kManifestName; }

bool manifest_exists(const std::string& dir) {
  std::error_code ec;
  return fs::symlink_status(manifest_path(dir), ec).type() != fs::file_type::not_found;
}

uint64_t total_bytes(const supervise::Manifest& manifest) {
  uint64_t bytes = 0;
  for (const supervise::ManifestFile& f : manifest.files) bytes += f.size;
  return bytes;
}

// "2 files, 13 B": what a manifest lists.
std::string files_and_bytes(const supervise::Manifest& manifest) {
  const size_t n = manifest.files.size();
  return fmt::format("{} file{}, {}", n, n == 1 ? "" : "s", format_bytes(total_bytes(manifest)));
}

// "hashed in 0.01 s (1.3 MB/s)".
std::string hash_speed(const supervise::Manifest& manifest, double seconds) {
  const double mb = static_cast<double>(total_bytes(manifest)) / kBytesPerMB;
  return fmt::format("hashed in {:.2f} s ({:.1f} MB/s)", seconds, mb / std::max(seconds, 1e-6));
}

// --step, else the number DIR's name ends with (iter_0000300, global_step1000, step_1200).
int64_t seal_step(const CheckpointOptions& o) {
  if (o.step >= 0) return o.step;
  fs::path name = fs::absolute(o.dir).lexically_normal();  // "." and "iter_0000300/" too
  if (!name.has_filename()) name = name.parent_path();
  if (auto step = supervise::step_in_name(name.filename().string())) return *step;
  throw Error(fmt::format("{}: its name does not end with a step number; give --step N", o.dir));
}

// Refuses to replace a manifest unless --force: sealing again would make whatever the files hold
// now (a corrupted file included) the reference.
int run_seal(const CheckpointOptions& o) {
  check_directory(o.dir);
  if (!o.force && manifest_exists(o.dir)) {
    throw Error(fmt::format("{}: already sealed; 'plumb checkpoint verify {}' checks the files "
                            "against it, --force seals again",
                            manifest_path(o.dir).string(), o.dir));
  }
  const int64_t step = seal_step(o);
  const Clock::time_point start = Clock::now();
  supervise::seal_checkpoint(o.dir, step);
  const double seconds = seconds_since(start);
  const supervise::ManifestRead read = supervise::read_manifest(o.dir, "");
  if (!read.manifest) throw Error(read.problem);
  fmt::print(std::cout, "sealed {} at step {}: {}; {}\nwrote {}\n", o.dir, step,
             files_and_bytes(*read.manifest), hash_speed(*read.manifest, seconds),
             manifest_path(o.dir).string());
  return 0;
}

// Exit 1 with every difference (a corrupt manifest included) on one line, like sha256sum -c.
int run_verify(const CheckpointOptions& o) {
  check_directory(o.dir);
  if (!manifest_exists(o.dir)) {
    throw Error(fmt::format("{}: no {} to verify against; 'plumb checkpoint seal {}' writes it",
                            o.dir, supervise::kManifestName, o.dir));
  }
  const Clock::time_point start = Clock::now();
  const supervise::ManifestRead read = supervise::read_manifest(o.dir, "");
  std::string problem = read.problem;
  if (read.manifest) problem = supervise::verify_manifest(o.dir, "", *read.manifest);
  if (!problem.empty()) {
    fmt::print(std::cout, "{}: FAILED: {}\n", o.dir, problem);
    return static_cast<int>(ExitCode::kCheckFailed);
  }
  fmt::print(std::cout, "{}: OK: {} match {} (step {}); {}\n", o.dir,
             files_and_bytes(*read.manifest), supervise::kManifestName, read.manifest->step,
             hash_speed(*read.manifest, seconds_since(start)));
  return 0;
}

nlohmann::json find_json(const std::string& dir, const supervise::CheckpointChoice& c) {
  nlohmann::json j = {{"schema", kFindSchema}, {"dir", dir}};
  j["path"] = c.path.empty() ? nlohmann::json() : nlohmann::json(c.path.string());
  j["step"] = c.step ? nlohmann::json(*c.step) : nlohmann::json();
  j["format"] = c.path.empty() ? nlohmann::json() : nlohmann::json(c.format);
  j["skipped"] = nlohmann::json::array();
  for (const supervise::SkippedCheckpoint& s : c.skipped) {
    j["skipped"].push_back({{"path", s.path.string()}, {"reason", s.reason}});
  }
  return j;
}

void print_choice(std::ostream& out, const supervise::CheckpointChoice& c) {
  if (c.path.empty()) {
    fmt::print(out, "no complete checkpoint: plumb run would start the job from the beginning\n");
  } else {
    fmt::print(out, "resume from: {} ({}{})\n", c.path.string(), c.format,
               c.step ? fmt::format(", step {}", *c.step) : "");
  }
  for (const supervise::SkippedCheckpoint& s : c.skipped) {
    fmt::print(out, "skipped: {}\n", s.reason);
  }
}

// Exit 1 when no checkpoint is complete, so that a script can ask `plumb checkpoint find D`.
int run_find(const CheckpointOptions& o) {
  std::optional<OutputFile> file;
  if (!o.json.empty()) file.emplace("--json", o.json);
  const supervise::CheckpointChoice choice = supervise::find_checkpoint(o.dir);
  print_choice(o.json == "-" ? std::cerr : std::cout, choice);
  if (file) {
    file->stream() << find_json(o.dir, choice).dump(2) << "\n";
    file->commit();
  }
  return choice.path.empty() ? static_cast<int>(ExitCode::kCheckFailed) : 0;
}

CLI::App* add_mode(CLI::App& app, CheckpointOptions& o, CheckpointMode mode, const char* name,
                   const char* summary) {
  CLI::App* sub = app.add_subcommand(name, summary);
  sub->add_option("DIR", o.dir, "The checkpoint's folder")->required();
  sub->callback([&o, mode] { o.mode = mode; });
  return sub;
}

}  // namespace

void setup_checkpoint(CLI::App& app, CheckpointOptions& o) {
  app.require_subcommand(1);
  CLI::App* seal =
      add_mode(app, o, CheckpointMode::kSeal, "seal",
               "Write DIR/plumb-checkpoint.json: every file with its size and SHA-256");
  seal->add_option("--step", o.step,
                   "The step the checkpoint holds (default: the number DIR's name ends with)")
      ->check(CLI::NonNegativeNumber);
  seal->add_flag("--force", o.force, "Replace an existing plumb-checkpoint.json");
  add_mode(app, o, CheckpointMode::kVerify, "verify",
           "Hash every file again and compare with DIR/plumb-checkpoint.json (exit 1 on a "
           "difference)");
  CLI::App* find = add_mode(app, o, CheckpointMode::kFind, "find",
                            "The checkpoint plumb run --checkpoint-dir DIR resumes from, and every "
                            "newer one skipped with its reason (exit 1 when none is complete)");
  find->add_option("--json", o.json, "Write plumb.checkpoint-find/1 here (- for standard output)");
  app.footer("Exit status: 0 ok; 1 verify found a difference, find found no complete checkpoint; "
             "2 bad usage, DIR missing or unreadable, seal over an existing manifest without "
             "--force, seal of a folder with no file or of a file that changed while it was hashed.");
}

int run_checkpoint(const CheckpointOptions& o) {
  switch (o.mode) {
    case CheckpointMode::kSeal: return run_seal(o);
    case CheckpointMode::kVerify: return run_verify(o);
    case CheckpointMode::kFind: return run_find(o);
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace plumb::cli
