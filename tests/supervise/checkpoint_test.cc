#include "supervise/checkpoint.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/sha256.h"
#include "supervise/checkpoint_manifest.h"
#include "support/subprocess.h"

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;

// Writes `text` at `dir`/`relative`, making the folders on the way.
void put(const std::string& dir, const std::string& relative, const std::string& text) {
  const fs::path path = fs::path(dir) / relative;
  fs::create_directories(path.parent_path());
  test::write_file(path.string(), text);
}

void make_folder(const std::string& dir, const std::string& relative) {
  fs::create_directories(fs::path(dir) / relative);
}

// Every entry under `dir` with its type, mode, size, modification time and content's SHA-256:
// equal fingerprints mean nothing was added, removed, written or touched.
std::string tree_fingerprint(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    lstat(entry.path().c_str(), &st);
    std::string line = entry.path().lexically_relative(dir).generic_string() + " mode " +
                       std::to_string(st.st_mode) + " mtime " + std::to_string(st.st_mtim.tv_sec) +
                       "." + std::to_string(st.st_mtim.tv_nsec);
    if (entry.is_regular_file()) {
      line += " size " + std::to_string(st.st_size) + " sha256 " +
              sha256_hex(test::read_file(entry.path().string()));
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

std::string relative(const std::string& dir, const fs::path& path) {
  return path.empty() ? "(none)" : path.lexically_relative(dir).generic_string();
}

std::vector<std::string> reasons(const CheckpointChoice& choice) {
  std::vector<std::string> all;
  for (const SkippedCheckpoint& s : choice.skipped) all.push_back(s.reason);
  return all;
}

// A Megatron-LM iteration folder as torch.save writes it (one model-parallel rank).
void megatron_iteration(const std::string& dir, int iteration) {
  char name[32];
  std::snprintf(name, sizeof name, "iter_%07d", iteration);
  put(dir, std::string(name) + "/mp_rank_00/model_optim_rng.pt", "weights");
}

// A PyTorch Distributed Checkpoint with two ranks' data files.
void dcp_checkpoint(const std::string& dir, const std::string& folder) {
  put(dir, folder + "/__0_0.distcp", "rank 0");
  put(dir, folder + "/__1_0.distcp", "rank 1");
  put(dir, folder + "/.metadata", "metadata");
}

void deepspeed_checkpoint(const std::string& dir, int step) {
  const std::string folder = "global_step" + std::to_string(step);
  put(dir, folder + "/mp_rank_00_model_states.pt", "weights");
  put(dir, folder + "/zero_pp_rank_0_mp_rank_00_optim_states.pt", "moments");
}

// ---- Megatron-LM ----

TEST(CheckpointMegatron, PicksTheIterationTheTrackerNames) {
  const std::string dir = test::temp_dir("ckpt-megatron-pick");
  megatron_iteration(dir, 100);
  megatron_iteration(dir, 200);
  put(dir, "latest_checkpointed_iteration.txt", "200\n");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "iter_0000200");
  EXPECT_EQ(choice.step, 200);
  EXPECT_EQ(choice.format, "megatron");
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(CheckpointMegatron, SkipsAnEmptyIterationTheTrackerNames) {
  const std::string dir = test::temp_dir("ckpt-megatron-empty");
  megatron_iteration(dir, 200);
  make_folder(dir, "iter_0000300");
  put(dir, "latest_checkpointed_iteration.txt", "300");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "iter_0000200");
  EXPECT_EQ(choice.step, 200);
  ASSERT_EQ(choice.skipped.size(), 1u);
  EXPECT_EQ(relative(dir, choice.skipped[0].path), "iter_0000300");
  EXPECT_EQ(choice.skipped[0].reason,
            "iter_0000300: latest_checkpointed_iteration.txt says 300 but the directory is empty");
}

TEST(CheckpointMegatron, TrackerPointingAtAMissingDirectory) {
  const std::string dir = test::temp_dir("ckpt-megatron-missing");
  megatron_iteration(dir, 200);
  put(dir, "latest_checkpointed_iteration.txt", "300\n");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "iter_0000200");
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000300: latest_checkpointed_iteration.txt says 300 "
                                     "but the directory is missing"});
}

TEST(CheckpointMegatron, SkipsAnIterationNewerThanTheTracker) {
  const std::string dir = test::temp_dir("ckpt-megatron-newer");
  megatron_iteration(dir, 200);
  megatron_iteration(dir, 300);  // saved, but the tracker was not yet rewritten
  put(dir, "latest_checkpointed_iteration.txt", "200");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 200);
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000300 is newer than latest_checkpointed_iteration.txt "
                                     "(200): an interrupted save?"});
}

TEST(CheckpointMegatron, OnlyEmptyFilesAreNotACheckpoint) {
  const std::string dir = test::temp_dir("ckpt-megatron-zero");
  megatron_iteration(dir, 100);
  put(dir, "iter_0000200/mp_rank_00/model_optim_rng.pt", "");
  put(dir, "latest_checkpointed_iteration.txt", "200");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 100);
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000200: latest_checkpointed_iteration.txt says 200 "
                                     "but the directory holds only empty files"});
}

TEST(CheckpointMegatron, ReleaseIsIterationZeroInTheReleaseFolder) {
  const std::string dir = test::temp_dir("ckpt-megatron-release");
  put(dir, "release/mp_rank_00/model_optim_rng.pt", "weights");
  put(dir, "latest_checkpointed_iteration.txt", "release\n");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "release");
  EXPECT_EQ(choice.step, 0);
  EXPECT_EQ(choice.format, "megatron");
}

TEST(CheckpointMegatron, WithoutTheTrackerNoIterationIsTrusted) {
  const std::string dir = test::temp_dir("ckpt-megatron-no-tracker");
  megatron_iteration(dir, 100);
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_TRUE(choice.path.empty());
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000100: no latest_checkpointed_iteration.txt file: "
                                     "Megatron-LM writes it once a save completes"});
}

TEST(CheckpointMegatron, ATrackerThatIsNotAnIterationNumber) {
  const std::string dir = test::temp_dir("ckpt-megatron-bad-tracker");
  megatron_iteration(dir, 100);
  put(dir, "latest_checkpointed_iteration.txt", "0\n");  // read_metadata asserts iteration > 0
  EXPECT_EQ(reasons(find_checkpoint(dir)),
            std::vector<std::string>{"iter_0000100: latest_checkpointed_iteration.txt holds \"0\", "
                                     "not an iteration number or \"release\""});
}

TEST(CheckpointMegatron, AManifestInsideAnIterationIsVerified) {
  const std::string dir = test::temp_dir("ckpt-megatron-manifest");
  megatron_iteration(dir, 100);
  megatron_iteration(dir, 200);
  put(dir, "latest_checkpointed_iteration.txt", "200");
  seal_checkpoint(fs::path(dir) / "iter_0000200", 200);
  put(dir, "iter_0000200/mp_rank_00/model_optim_rng.pt", "weighTs");  // one byte, same size
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 100);
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000200/mp_rank_00/model_optim_rng.pt: SHA-256 differs "
                                     "from iter_0000200/plumb-checkpoint.json"});
}

TEST(CheckpointMegatron, ATorchDistIterationFollowsDcpsRuleToo) {
  const std::string dir = test::temp_dir("ckpt-megatron-torch-dist");
  dcp_checkpoint(dir, "iter_0000200");
  put(dir, "iter_0000300/__0_0.distcp", "rank 0");
  put(dir, "latest_checkpointed_iteration.txt", "300");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "iter_0000200");
  EXPECT_EQ(choice.format, "megatron");
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"iter_0000300/.metadata is missing: an interrupted save?"});
}

// ---- PyTorch Distributed Checkpoint ----

TEST(CheckpointDcp, PicksTheNewestFolderByTheNumberEndingItsName) {
  const std::string dir = test::temp_dir("ckpt-dcp-pick");
  dcp_checkpoint(dir, "step_1000");
  dcp_checkpoint(dir, "step_1200");
  dcp_checkpoint(dir, "step_800");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "step_1200");
  EXPECT_EQ(choice.step, 1200);
  EXPECT_EQ(choice.format, "dcp");
}

TEST(CheckpointDcp, ALatestFileNamingADcpFolderIsNotDeepSpeeds) {
  const std::string dir = test::temp_dir("ckpt-dcp-latest");
  dcp_checkpoint(dir, "step_1200");
  put(dir, "latest", "step_1200\n");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "step_1200");
  EXPECT_EQ(choice.format, "dcp");
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(CheckpointDcp, SkipsAFolderWithoutMetadata) {
  const std::string dir = test::temp_dir("ckpt-dcp-no-metadata");
  dcp_checkpoint(dir, "step_1000");
  put(dir, "step_1200/__0_0.distcp", "rank 0");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "step_1000");
  ASSERT_EQ(choice.skipped.size(), 1u);
  EXPECT_EQ(relative(dir, choice.skipped[0].path), "step_1200");
  EXPECT_EQ(choice.skipped[0].reason, "step_1200/.metadata is missing: an interrupted save?");
}

TEST(CheckpointDcp, SkipsEmptyMetadataAndMetadataWithoutData) {
  const std::string dir = test::temp_dir("ckpt-dcp-empty");
  dcp_checkpoint(dir, "checkpoint-1000");
  put(dir, "checkpoint-1300/__0_0.distcp", "rank 0");
  put(dir, "checkpoint-1300/.metadata", "");
  put(dir, "checkpoint-1400/.metadata", "metadata");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 1000);
  EXPECT_EQ(reasons(choice),
            (std::vector<std::string>{"checkpoint-1400 holds .metadata but no *.distcp file",
                                      "checkpoint-1300/.metadata is empty: an interrupted save?"}));
}

TEST(CheckpointDcp, TheDirectoryItselfWithoutANumberHasNoStep) {
  const std::string dir = test::temp_dir("ckpt-dcp-final") + "/final";
  dcp_checkpoint(dir, ".");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.path, fs::path(dir));
  EXPECT_EQ(choice.step, std::nullopt);
  EXPECT_EQ(choice.format, "dcp");
}

TEST(CheckpointDcp, TheDirectoryItselfTakesTheStepFromItsName) {
  const std::string dir = test::temp_dir("ckpt-dcp-self") + "/step_1200/";
  dcp_checkpoint(dir, ".");
  CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.path, fs::path(dir).parent_path());
  EXPECT_EQ(choice.step, 1200);
  EXPECT_EQ(choice.format, "dcp");

  fs::remove(fs::path(dir) / ".metadata");
  choice = find_checkpoint(dir);
  EXPECT_TRUE(choice.path.empty());
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{".metadata is missing: an interrupted save?"});
}

// ---- DeepSpeed ----

TEST(CheckpointDeepSpeed, PicksTheTagLatestNames) {
  const std::string dir = test::temp_dir("ckpt-ds-pick");
  deepspeed_checkpoint(dir, 500);
  deepspeed_checkpoint(dir, 1000);
  put(dir, "latest", "global_step1000");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "global_step1000");
  EXPECT_EQ(choice.step, 1000);
  EXPECT_EQ(choice.format, "deepspeed");
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(CheckpointDeepSpeed, LatestPointingAtAMissingDirectory) {
  const std::string dir = test::temp_dir("ckpt-ds-missing");
  deepspeed_checkpoint(dir, 1000);
  put(dir, "latest", "global_step1500\n");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 1000);
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{
                "global_step1500: latest says global_step1500 but the directory is missing"});
}

TEST(CheckpointDeepSpeed, SkipsAFolderWithoutModelStatesAndOneNewerThanLatest) {
  const std::string dir = test::temp_dir("ckpt-ds-partial");
  deepspeed_checkpoint(dir, 500);
  put(dir, "global_step1000/zero_pp_rank_0_mp_rank_00_optim_states.pt", "moments");
  deepspeed_checkpoint(dir, 1500);
  put(dir, "latest", "global_step1000");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.step, 500);
  EXPECT_EQ(reasons(choice),
            (std::vector<std::string>{
                "global_step1500 is newer than latest (global_step1000): an interrupted save?",
                "global_step1000: latest says global_step1000 but the directory holds no "
                "*model_states.pt file"}));
}

// Megatron-DeepSpeed saves through DeepSpeed and writes Megatron's tracker too.
TEST(CheckpointDeepSpeed, MegatronDeepSpeedsTrackerBesideLatestIsNotAMissingIteration) {
  const std::string dir = test::temp_dir("ckpt-megatron-deepspeed");
  deepspeed_checkpoint(dir, 1000);
  put(dir, "latest", "global_step1000");
  put(dir, "latest_checkpointed_iteration.txt", "1000");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "global_step1000");
  EXPECT_EQ(choice.format, "deepspeed");
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(CheckpointDeepSpeed, AnEmptyModelStatesFileIsAnInterruptedSave) {
  const std::string dir = test::temp_dir("ckpt-ds-empty");
  deepspeed_checkpoint(dir, 500);
  put(dir, "global_step1000/mp_rank_00_model_states.pt", "");
  put(dir, "latest", "global_step1000");
  EXPECT_EQ(reasons(find_checkpoint(dir)),
            std::vector<std::string>{
                "global_step1000/mp_rank_00_model_states.pt is empty: an interrupted save?"});
}

// ---- plumb's manifest ----

TEST(CheckpointManifest, SealWritesEveryFileWithItsSizeAndSha256) {
  const std::string dir = test::temp_dir("ckpt-seal");
  put(dir, "model.pt", "weights");
  put(dir, "optim/state.pt", "moments");
  seal_checkpoint(dir, 42);
  EXPECT_EQ(test::read_file(dir + "/plumb-checkpoint.json"),
            "{\n"
            "  \"schema\": \"plumb.checkpoint/1\",\n"
            "  \"step\": 42,\n"
            "  \"files\": [\n"
            "    {\"path\": \"model.pt\", \"size\": 7, \"sha256\": "
            "\"9a129038d9a00aed0cf6a7ea059ca50a813449061ab87848cf1a13eafdf33b2c\"},\n"
            "    {\"path\": \"optim/state.pt\", \"size\": 7, \"sha256\": "
            "\"690a8d18f75dfaa79dd8134ac62cdad42fffe0f34cb78dd14e2d3aae3ae83ad3\"}\n"
            "  ]\n"
            "}\n");
  seal_checkpoint(dir, 43);  // sealing again does not list the manifest itself
  EXPECT_EQ(test::read_file(dir + "/plumb-checkpoint.json").find("plumb-checkpoint.json\""),
            std::string::npos);
}

TEST(CheckpointManifest, RoundTripThenOneCorruptByteIsSkipped) {
  const std::string dir = test::temp_dir("ckpt-roundtrip");
  put(dir, "model.pt", "weights");
  put(dir, "optim/state.pt", "moments");
  seal_checkpoint(dir, 1200);
  CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(choice.path, fs::path(dir));
  EXPECT_EQ(choice.step, 1200);
  EXPECT_EQ(choice.format, "plumb");
  EXPECT_TRUE(choice.skipped.empty());

  put(dir, "model.pt", "weightz");
  choice = find_checkpoint(dir);
  EXPECT_TRUE(choice.path.empty());
  EXPECT_EQ(reasons(choice),
            std::vector<std::string>{"model.pt: SHA-256 differs from plumb-checkpoint.json"});
}

TEST(CheckpointManifest, ATruncatedAndAMissingFileAreBothNamed) {
  const std::string dir = test::temp_dir("ckpt-manifest-sizes");
  put(dir, "model.pt", "weights");
  put(dir, "optim/state.pt", "moments");
  seal_checkpoint(dir, 7);
  put(dir, "model.pt", "wei");
  fs::remove(fs::path(dir) / "optim/state.pt");
  EXPECT_EQ(reasons(find_checkpoint(dir)),
            std::vector<std::string>{"model.pt: 3 bytes, plumb-checkpoint.json says 7; "
                                     "optim/state.pt is missing (listed in plumb-checkpoint.json)"});
}

TEST(CheckpointManifest, EveryProblemOfAManifestIsNamed) {
  const std::string dir = test::temp_dir("ckpt-manifest-bad");
  put(dir, "run_1/plumb-checkpoint.json", "{\"schema\": \"plumb.checkpoint/1\", \"step\": 1,");
  put(dir, "run_2/plumb-checkpoint.json",
      "{\"schema\": \"plumb.checkpoint/2\", \"step\": -3, \"files\": ["
      "{\"path\": \"../escape.pt\", \"size\": 1, \"sha256\": \"AB\"}, 7]}");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_TRUE(choice.path.empty());
  EXPECT_EQ(reasons(choice),
            (std::vector<std::string>{
                "run_2/plumb-checkpoint.json: schema: expected \"plumb.checkpoint/1\"; step: "
                "expected a whole number, 0 or more; files[0].path: expected a relative path "
                "inside the checkpoint; files[0].sha256: expected 64 lowercase hex digits; "
                "files[1]: expected an object with path, size and sha256",
                "run_1/plumb-checkpoint.json: not valid JSON: parse error at line 1, column 44: "
                "syntax error while parsing object key - unexpected end of input; expected "
                "string literal"}));  // newest first, by the folders' names
}

TEST(CheckpointManifest, SealedSubfoldersArePickedByTheirManifestsStep) {
  const std::string dir = test::temp_dir("ckpt-manifest-folders");
  put(dir, "run_a/model.pt", "weights");
  put(dir, "run_b/model.pt", "weights");
  seal_checkpoint(fs::path(dir) / "run_a", 10);
  seal_checkpoint(fs::path(dir) / "run_b", 20);
  put(dir, "run_b/model.pt", "Weights");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "run_a");
  EXPECT_EQ(choice.step, 10);
  EXPECT_EQ(choice.format, "plumb");
  EXPECT_EQ(reasons(choice), std::vector<std::string>{
                                 "run_b/model.pt: SHA-256 differs from run_b/plumb-checkpoint.json"});
}

TEST(CheckpointManifest, SealRefusesANegativeStepAndAMissingDirectory) {
  const std::string dir = test::temp_dir("ckpt-seal-bad");
  EXPECT_EQ(test::error_message([&] { seal_checkpoint(dir, -1); }),
            "step -1: expected a whole number, 0 or more");
  EXPECT_EQ(test::error_message([&] { seal_checkpoint(dir + "/absent", 1); }),
            dir + "/absent: cannot read the checkpoint directory: No such file or directory");
}

TEST(CheckpointManifest, SealRefusesAFileNameAManifestCannotHold) {
  const std::string dir = test::temp_dir("ckpt-seal-name");
  put(dir, "bad\x01name.pt", "weights");
  EXPECT_EQ(test::error_message([&] { seal_checkpoint(dir, 1); }),
            dir + "/bad\\x01name.pt: the name is not plain UTF-8 text; a manifest cannot list it");
  EXPECT_FALSE(fs::exists(fs::path(dir) / "plumb-checkpoint.json"));
}

// ---- what a manifest may vouch for (issue 28) ----

TEST(CheckpointManifest, SealRefusesAFolderWithNoFile) {
  const std::string dir = test::temp_dir("ckpt-seal-empty");
  EXPECT_EQ(test::error_message([&] { seal_checkpoint(dir, 5); }),
            dir + ": holds no file to seal (a checkpoint without files is not complete)");
  make_folder(dir, "optim/shards");  // folders alone are not files
  EXPECT_EQ(test::error_message([&] { seal_checkpoint(dir, 5); }),
            dir + ": holds no file to seal (a checkpoint without files is not complete)");
  EXPECT_FALSE(fs::exists(fs::path(dir) / "plumb-checkpoint.json"));
}

// find used to pick a manifest listing nothing (nothing to fail) over a real, older checkpoint.
TEST(CheckpointManifest, AManifestListingNoFileIsNotComplete) {
  const std::string dir = test::temp_dir("ckpt-manifest-empty");
  put(dir, "step_100/model.pt", "weights");
  seal_checkpoint(fs::path(dir) / "step_100", 100);
  put(dir, "step_200/plumb-checkpoint.json",
      "{\"schema\": \"plumb.checkpoint/1\", \"step\": 200, \"files\": []}");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "step_100");
  EXPECT_EQ(choice.step, 100);
  EXPECT_EQ(reasons(choice), std::vector<std::string>{"step_200/plumb-checkpoint.json: files: expected at least "
                                                      "one file (a checkpoint without files is not complete)"});
  const ManifestRead read = read_manifest(fs::path(dir) / "step_200", "");
  EXPECT_FALSE(read.manifest.has_value());
  EXPECT_EQ(read.problem,
            "plumb-checkpoint.json: files: expected at least one file (a checkpoint without files is not complete)");
}

// Sets `path`'s modification time to `seconds` (since 1970, UTC) and `nanoseconds`.
void set_mtime(const fs::path& path, time_t seconds, long nanoseconds) {
  const timespec times[2] = {{seconds, nanoseconds}, {seconds, nanoseconds}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

constexpr time_t k2025 = 1735689600;  // 2025-01-01 00:00:00 UTC

// A file in the folder, dated; `change` runs once it was hashed, as a job still writing would.
std::string seal_error_when(const std::string& name, const std::function<void(const fs::path&)>& change) {
  const std::string dir = test::temp_dir(name);
  put(dir, "model.pt", "weights");
  put(dir, "optim.pt", "moments");
  set_mtime(fs::path(dir) / "model.pt", k2025, 0);
  const std::string message = test::error_message([&] {
    seal_checkpoint(dir, 9, [&](const fs::path& hashed) {
      if (hashed.filename() == "model.pt") change(hashed);
    });
  });
  EXPECT_FALSE(fs::exists(fs::path(dir) / "plumb-checkpoint.json")) << name;
  return message.substr(message.find("model.pt"));
}

TEST(CheckpointManifest, AFileThatChangedWhileItWasHashedFailsTheSeal) {
  EXPECT_EQ(seal_error_when("ckpt-seal-grows",
                            [](const fs::path& p) {
                              test::write_file(p.string(), "weights++");
                              set_mtime(p, k2025 + 1, 250000000);
                            }),
            "model.pt: changed while it was hashed: 7 bytes, modified 2025-01-01 00:00:00.000000000 UTC when "
            "opened; 9 bytes, modified 2025-01-01 00:00:01.250000000 UTC once 7 bytes were read");
  // The same size, written again: the modification time tells.
  EXPECT_EQ(seal_error_when("ckpt-seal-rewritten",
                            [](const fs::path& p) {
                              test::write_file(p.string(), "weightz");
                              set_mtime(p, k2025, 1);
                            }),
            "model.pt: changed while it was hashed: 7 bytes, modified 2025-01-01 00:00:00.000000000 UTC when "
            "opened; 7 bytes, modified 2025-01-01 00:00:00.000000001 UTC once 7 bytes were read");
  // A new file renamed over the old one, with the same size and time: another inode.
  EXPECT_EQ(seal_error_when("ckpt-seal-replaced",
                            [](const fs::path& p) {
                              const fs::path next = p.string() + ".tmp";
                              test::write_file(next.string(), "weightz");
                              set_mtime(next, k2025, 0);
                              fs::rename(next, p);
                            }),
            "model.pt: was replaced by another file while it was hashed: 7 bytes, modified 2025-01-01 "
            "00:00:00.000000000 UTC when opened; the new one 7 bytes, modified 2025-01-01 00:00:00.000000000 UTC");
  EXPECT_EQ(seal_error_when("ckpt-seal-removed", [](const fs::path& p) { fs::remove(p); }),
            "model.pt: was removed while it was hashed (No such file or directory)");
}

TEST(CheckpointManifest, AFileLeftAloneWhileItWasHashedIsSealed) {
  const std::string dir = test::temp_dir("ckpt-seal-still");
  put(dir, "model.pt", "weights");
  std::vector<std::string> hashed;
  seal_checkpoint(dir, 3, [&](const fs::path& p) { hashed.push_back(p.filename().string()); });
  EXPECT_EQ(hashed, std::vector<std::string>{"model.pt"});
  EXPECT_EQ(find_checkpoint(dir).step, 3);
}

TEST(CheckpointMegatron, ATrackerTooLargeForAPointerIsNamed) {
  const std::string dir = test::temp_dir("ckpt-megatron-huge-tracker");
  megatron_iteration(dir, 100);
  put(dir, "latest_checkpointed_iteration.txt", std::string(5000, '1'));
  EXPECT_EQ(reasons(find_checkpoint(dir)),
            std::vector<std::string>{"iter_0000100: latest_checkpointed_iteration.txt: is larger "
                                     "than 4096 bytes"});
}

// ---- the directory ----

TEST(CheckpointDirectory, FindingLeavesTheTreeByteForByteUnchanged) {
  const std::string dir = test::temp_dir("ckpt-unchanged");
  megatron_iteration(dir, 100);
  make_folder(dir, "iter_0000200");
  put(dir, "latest_checkpointed_iteration.txt", "200");
  deepspeed_checkpoint(dir, 50);
  put(dir, "latest", "global_step60");
  dcp_checkpoint(dir, "step_150");
  put(dir, "step_250/__0_0.distcp", "rank 0");
  put(dir, "sealed/model.pt", "weights");
  seal_checkpoint(fs::path(dir) / "sealed", 300);
  put(dir, "sealed/model.pt", "weightz");
  const std::string before = tree_fingerprint(dir);
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_EQ(relative(dir, choice.path), "step_150");
  EXPECT_EQ(reasons(choice),
            (std::vector<std::string>{
                "sealed/model.pt: SHA-256 differs from sealed/plumb-checkpoint.json",
                "step_250/.metadata is missing: an interrupted save?",
                "iter_0000200: latest_checkpointed_iteration.txt says 200 but the directory is "
                "empty"}));
  EXPECT_EQ(tree_fingerprint(dir), before);
}

TEST(CheckpointDirectory, AnEmptyDirectoryHoldsNoCheckpoint) {
  const std::string dir = test::temp_dir("ckpt-none");
  const CheckpointChoice choice = find_checkpoint(dir);
  EXPECT_TRUE(choice.path.empty());
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(CheckpointDirectory, AMissingDirectoryOrAFileIsAnErrorNamingIt) {
  const std::string dir = test::temp_dir("ckpt-errors");
  try {
    find_checkpoint(dir + "/absent");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 (dir + "/absent: cannot read the checkpoint directory: No such file or directory")
                     .c_str());
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  put(dir, "file", "x");
  EXPECT_EQ(test::error_message([&] { find_checkpoint(dir + "/file"); }),
            dir + "/file: not a directory; expected the checkpoint directory");
}

constexpr const char* kUnreachable = "(the test folder is not reachable as user nobody)";

// Runs `fn` in a child process that cannot read what its mode forbids (as user nobody when the
// tests run as root, who reads everything) and returns what it returned; kUnreachable when that
// user cannot reach `folder` (a build tree under a private home directory).
std::string in_unprivileged_child(const std::string& folder,
                                  const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "(no pipe)";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    constexpr uid_t kNobody = 65534;
    if (geteuid() == 0 && (setgid(kNobody) != 0 || setuid(kNobody) != 0)) _exit(3);
    std::string text;
    try {
      text = access(folder.c_str(), X_OK) == 0 ? fn() : kUnreachable;
    } catch (const std::exception& e) {
      text = std::string("unexpected error: ") + e.what();
    }
    if (write(fds[1], text.data(), text.size()) < 0) _exit(4);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

TEST(CheckpointDirectory, AnUnreadableDirectoryIsAnErrorNamingIt) {
  const std::string dir = test::temp_dir("ckpt-unreadable") + "/ckpt";
  make_folder(dir, ".");
  chmod(dir.c_str(), 0);
  const std::string message = in_unprivileged_child(
      fs::path(dir).parent_path(), [&] { return test::error_message([&] { find_checkpoint(dir); }); });
  chmod(dir.c_str(), 0755);
  if (message == kUnreachable) GTEST_SKIP() << message;
  EXPECT_EQ(message, dir + ": cannot read the checkpoint directory: Permission denied");
}

TEST(CheckpointDirectory, AnUnreadableCheckpointIsSkipped) {
  const std::string dir = test::temp_dir("ckpt-unreadable-iter");
  fs::permissions(dir, fs::perms(0755));
  megatron_iteration(dir, 200);
  megatron_iteration(dir, 300);
  put(dir, "latest_checkpointed_iteration.txt", "300");
  const std::string iteration = dir + "/iter_0000300";
  chmod(iteration.c_str(), 0);
  const std::string result = in_unprivileged_child(dir, [&] {
    const CheckpointChoice choice = find_checkpoint(dir);
    return relative(dir, choice.path) + "\n" + reasons(choice).at(0);
  });
  chmod(iteration.c_str(), 0755);
  if (result == kUnreachable) GTEST_SKIP() << result;
  EXPECT_EQ(result,
            "iter_0000200\niter_0000300: latest_checkpointed_iteration.txt says 300 but the "
            "directory cannot be read (Permission denied)");
}

}  // namespace
}  // namespace plumb::supervise
