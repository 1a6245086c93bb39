// plumb checkpoint seal|verify|find end to end: the real binary over checkpoint folders made
// here; exact outputs and exit codes (docs/run.md, "plumb checkpoint"), and verify and find
// leave the folder as it was, byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

namespace fs = std::filesystem;

const std::string kPlumb = PLUMB_BIN;
// sha256sum of "weights\n" and of "adam\n".
const std::string kWeightsSha = "1b465fa6b6bcbc06a3199e3d2d8aec35d37494a712f888b6d5536684dd89d0f0";
const std::string kAdamSha = "f3fd8f664c016fec4372773c6b6ac06d0789857297b2473bcd33fba523dad5fc";
// The timing part of seal's and verify's lines: it changes from run to run.
const std::string kHashed = R"(hashed in \d+\.\d\d s \(\d+\.\d MB/s\))";

void put(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  write_file(path.string(), text);
}

// A Megatron iteration folder: model.pt (8 bytes) and optim/state.pt (5 bytes).
std::string iteration(const std::string& name) {
  const std::string dir = temp_dir(name) + "/iter_0000300";
  put(dir + "/model.pt", "weights\n");
  put(dir + "/optim/state.pt", "adam\n");
  return dir;
}

test::Run plumb(const std::string& args) {
  return run_command(kPlumb + " checkpoint " + args);
}

bool matches(const std::string& text, const std::string& pattern) {
  return std::regex_match(text, std::regex(pattern));
}

std::string escaped(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

// Every path with its size, modification time and mode, and a hash of every file's bytes.
std::string snapshot(const std::string& dir) {
  return run_command("(cd " + dir + " && find . -printf '%p %s %T@ %m\\n' | sort && "
                     "find . -type f | sort | xargs -r sha256sum)")
      .out;
}

TEST(CheckpointCli, SealWritesTheManifestAndVerifyAcceptsIt) {
  const std::string dir = iteration("ckpt-seal");
  const test::Run seal = plumb("seal " + dir);
  EXPECT_EQ(seal.exit_code, 0) << seal.err;
  EXPECT_TRUE(matches(seal.out,
                      escaped("sealed " + dir + " at step 300: 2 files, 13 B; ") + kHashed +
                          escaped("\nwrote " + dir + "/plumb-checkpoint.json\n")))
      << seal.out;
  EXPECT_EQ(read_file(dir + "/plumb-checkpoint.json"),
            "{\n  \"schema\": \"plumb.checkpoint/1\",\n  \"step\": 300,\n  \"files\": [\n"
            "    {\"path\": \"model.pt\", \"size\": 8, \"sha256\": \"" + kWeightsSha + "\"},\n"
            "    {\"path\": \"optim/state.pt\", \"size\": 5, \"sha256\": \"" + kAdamSha + "\"}\n"
            "  ]\n}\n");
  const test::Run verify = plumb("verify " + dir);
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_TRUE(matches(verify.out, escaped(dir + ": OK: 2 files, 13 B match plumb-checkpoint.json "
                                                "(step 300); ") + kHashed + "\n"))
      << verify.out;
  EXPECT_EQ(verify.err, "");
}

TEST(CheckpointCli, SealTakesTheStepFromTheNameOrFromStep) {
  const std::string root = temp_dir("ckpt-step");
  put(root + "/global_step1000/mp_rank_00_model_states.pt", "weights\n");
  put(root + "/final/model.pt", "weights\n");
  EXPECT_EQ(plumb("seal " + root + "/global_step1000/").exit_code, 0);
  EXPECT_NE(read_file(root + "/global_step1000/plumb-checkpoint.json").find("\"step\": 1000,"),
            std::string::npos);
  put(root + "/step_7/model.pt", "weights\n");
  EXPECT_EQ(run_command("cd " + root + "/step_7 && " + kPlumb + " checkpoint seal .").out
                .rfind("sealed . at step 7: 1 file, 8 B; ", 0),
            0u);
  const test::Run unnamed = plumb("seal " + root + "/final");
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_EQ(unnamed.err, "plumb: error: " + root +
                             "/final: its name does not end with a step number; give --step N\n");
  EXPECT_FALSE(fs::exists(root + "/final/plumb-checkpoint.json"));
  EXPECT_EQ(plumb("seal --step 1200 " + root + "/final").exit_code, 0);
  EXPECT_NE(read_file(root + "/final/plumb-checkpoint.json").find("\"step\": 1200,"),
            std::string::npos);
}

// Sealing again would make whatever the files hold now, a corrupted file included, the
// reference: refused unless --force.
TEST(CheckpointCli, SealRefusesAnExistingManifestUnlessForced) {
  const std::string dir = iteration("ckpt-reseal");
  ASSERT_EQ(plumb("seal " + dir).exit_code, 0);
  const std::string sealed = read_file(dir + "/plumb-checkpoint.json");
  put(dir + "/model.pt", "changed\n");
  const test::Run again = plumb("seal " + dir);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(again.out, "");
  EXPECT_EQ(again.err, "plumb: error: " + dir + "/plumb-checkpoint.json: already sealed; "
                       "'plumb checkpoint verify " + dir + "' checks the files against it, "
                       "--force seals again\n");
  EXPECT_EQ(read_file(dir + "/plumb-checkpoint.json"), sealed);
  const test::Run forced = plumb("seal --force --step 301 " + dir);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(read_file(dir + "/plumb-checkpoint.json").find("\"step\": 301,"), std::string::npos);
  EXPECT_EQ(plumb("verify " + dir).exit_code, 0);
}

TEST(CheckpointCli, VerifyNamesTheFileThatChanged) {
  const std::string dir = iteration("ckpt-flip");
  ASSERT_EQ(plumb("seal " + dir).exit_code, 0);
  put(dir + "/model.pt", "weighTs\n");  // one byte flipped, the same size
  const std::string before = snapshot(dir);
  ASSERT_NE(before.find("./optim/state.pt 5 "), std::string::npos) << before;
  const test::Run r = plumb("verify " + dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, dir + ": FAILED: model.pt: SHA-256 differs from plumb-checkpoint.json\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(snapshot(dir), before);
}

TEST(CheckpointCli, VerifyNamesATruncatedOrMissingFile) {
  const std::string dir = iteration("ckpt-truncated");
  ASSERT_EQ(plumb("seal " + dir).exit_code, 0);
  fs::resize_file(dir + "/optim/state.pt", 2);
  const test::Run truncated = plumb("verify " + dir);
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_EQ(truncated.out,
            dir + ": FAILED: optim/state.pt: 2 bytes, plumb-checkpoint.json says 5\n");
  fs::remove(dir + "/model.pt");
  const test::Run missing = plumb("verify " + dir);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, dir + ": FAILED: model.pt is missing (listed in plumb-checkpoint.json); "
                               "optim/state.pt: 2 bytes, plumb-checkpoint.json says 5\n");
}

TEST(CheckpointCli, VerifyWithoutOrWithABrokenManifest) {
  const std::string dir = iteration("ckpt-no-manifest");
  const test::Run none = plumb("verify " + dir);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "plumb: error: " + dir + ": no plumb-checkpoint.json to verify against; "
                      "'plumb checkpoint seal " + dir + "' writes it\n");
  put(dir + "/plumb-checkpoint.json", "{\"schema\": \"plumb.checkpoint/1\", \"files\": [");
  const test::Run broken = plumb("verify " + dir);
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_EQ(broken.out, dir + ": FAILED: plumb-checkpoint.json: not valid JSON: parse error at line "
                        "1, column 44: syntax error while parsing value - unexpected end of "
                        "input; expected '[', '{', or a literal\n");
  put(dir + "/plumb-checkpoint.json",
      "{\"schema\": \"plumb.checkpoint/1\", \"step\": -1, \"files\": [{\"path\": \"../x\"}]}");
  const test::Run fields = plumb("verify " + dir);
  EXPECT_EQ(fields.exit_code, 1);
  EXPECT_EQ(fields.out, dir + ": FAILED: plumb-checkpoint.json: step: expected a whole number, 0 "
                              "or more; files[0].path: expected a relative path inside the "
                              "checkpoint; files[0].size: expected a byte count; "
                              "files[0].sha256: expected 64 lowercase hex digits\n");
}

// A Megatron folder whose tracker names a save that never wrote a file, with a folder newer
// than the tracker: find names both and the iteration before them.
std::string megatron_with_partial_newest(const std::string& name) {
  const std::string dir = temp_dir(name) + "/ckpt";
  put(dir + "/iter_0000002/model.pt", "weights\n");
  put(dir + "/iter_0000004/model.pt", "weights\n");
  fs::create_directories(dir + "/iter_0000006");
  put(dir + "/iter_0000008/model.pt", "weigh");
  put(dir + "/latest_checkpointed_iteration.txt", "6");
  return dir;
}

TEST(CheckpointCli, FindSkipsAPartialNewestIteration) {
  const std::string dir = megatron_with_partial_newest("ckpt-find");
  const std::string before = snapshot(dir);
  const test::Run r = plumb("find " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resume from: " + dir + "/iter_0000004 (megatron, step 4)\n"
                   "skipped: iter_0000008 is newer than latest_checkpointed_iteration.txt (6): "
                   "an interrupted save?\n"
                   "skipped: iter_0000006: latest_checkpointed_iteration.txt says 6 but the "
                   "directory is empty\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(snapshot(dir), before);
}

TEST(CheckpointCli, FindWritesJson) {
  const std::string dir = megatron_with_partial_newest("ckpt-find-json");
  const test::Run r = plumb("find --json - " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json expected = {
      {"schema", "plumb.checkpoint-find/1"},
      {"dir", dir},
      {"path", dir + "/iter_0000004"},
      {"step", 4},
      {"format", "megatron"},
      {"skipped",
       {{{"path", dir + "/iter_0000008"},
         {"reason", "iter_0000008 is newer than latest_checkpointed_iteration.txt (6): an "
                    "interrupted save?"}},
        {{"path", dir + "/iter_0000006"},
         {"reason", "iter_0000006: latest_checkpointed_iteration.txt says 6 but the directory "
                    "is empty"}}}}};
  EXPECT_EQ(r.out, expected.dump(2) + "\n");
  EXPECT_NE(r.err.find("resume from: " + dir + "/iter_0000004"), std::string::npos) << r.err;
}

// A sealed checkpoint whose file changed is skipped for the one before it; plumb run would do
// the same.
TEST(CheckpointCli, FindSkipsASealedCheckpointThatNoLongerVerifies) {
  const std::string root = temp_dir("ckpt-find-sealed");
  put(root + "/step_100/model.pt", "weights\n");
  put(root + "/step_200/model.pt", "weights\n");
  ASSERT_EQ(plumb("seal " + root + "/step_100").exit_code, 0);
  ASSERT_EQ(plumb("seal " + root + "/step_200").exit_code, 0);
  put(root + "/step_200/model.pt", "weighTs\n");
  const test::Run r = plumb("find " + root);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resume from: " + root + "/step_100 (plumb, step 100)\n"
                   "skipped: step_200/model.pt: SHA-256 differs from "
                   "step_200/plumb-checkpoint.json\n");
}

TEST(CheckpointCli, FindWithoutACompleteCheckpointExitsOne) {
  const std::string dir = temp_dir("ckpt-find-none");
  fs::create_directories(dir + "/iter_0000002");
  const test::Run r = plumb("find " + dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "no complete checkpoint: plumb run would start the job from the beginning\n"
                   "skipped: iter_0000002: no latest_checkpointed_iteration.txt file: Megatron-LM "
                   "writes it once a save completes\n");
}

// Issue 28: seal wrote a manifest of nothing for an empty folder, and find then preferred it to a
// real, older checkpoint.
TEST(CheckpointCli, SealRefusesAFolderWithNoFile) {
  const std::string dir = temp_dir("ckpt-seal-nothing") + "/step_9";
  fs::create_directories(dir + "/shards");
  const test::Run r = plumb("seal " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "plumb: error: " + dir + ": holds no file to seal (a checkpoint without files is not complete)\n");
  EXPECT_FALSE(fs::exists(dir + "/plumb-checkpoint.json"));
}

TEST(CheckpointCli, FindSkipsAManifestListingNoFile) {
  const std::string root = temp_dir("ckpt-find-listless");
  put(root + "/step_100/model.pt", "weights\n");
  ASSERT_EQ(plumb("seal " + root + "/step_100").exit_code, 0);
  put(root + "/step_200/plumb-checkpoint.json",
      "{\"schema\": \"plumb.checkpoint/1\", \"step\": 200, \"files\": []}\n");
  const test::Run r = plumb("find " + root);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resume from: " + root + "/step_100 (plumb, step 100)\n"
                   "skipped: step_200/plumb-checkpoint.json: files: expected at least one file (a checkpoint "
                   "without files is not complete)\n");
  const test::Run verify = plumb("verify " + root + "/step_200");
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_EQ(verify.out, root + "/step_200: FAILED: plumb-checkpoint.json: files: expected at least one file (a "
                               "checkpoint without files is not complete)\n");
}

// A file the job is still writing while seal hashes it: a 256 MiB sparse file (hashing takes a
// good fraction of a second) that a shell loop appends a byte to every 5 ms.
TEST(CheckpointCli, SealFailsOnAFileStillBeingWritten) {
  const std::string dir = temp_dir("ckpt-seal-writing") + "/step_3";
  put(dir + "/optim.pt", "adam\n");
  const std::string file = dir + "/model.pt";
  put(file, "");
  fs::resize_file(file, size_t{256} << 20);
  // In a subshell as a whole: run_command redirects what it is given.
  const test::Run r = run_command("((while :; do printf x >> " + file + "; sleep 0.005; done) & writer=$!; " + kPlumb +
                                  " checkpoint seal " + dir + "; status=$?; kill $writer; exit $status)");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const std::string when = R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} UTC)";
  EXPECT_TRUE(matches(r.err, escaped("plumb: error: " + file + ": changed while it was hashed: ") + R"(\d+ bytes, )" +
                                 "modified " + when + R"( when opened; \d+ bytes, modified )" + when +
                                 R"( once \d+ bytes were read\n)"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/plumb-checkpoint.json"));
}

TEST(CheckpointCli, AMissingDirOrAFileIsOneLineWithExitTwo) {
  const std::string dir = temp_dir("ckpt-missing");
  put(dir + "/file", "x");
  for (const std::string mode : {"seal", "verify", "find"}) {
    const test::Run missing = plumb(mode + " " + dir + "/absent");
    EXPECT_EQ(missing.exit_code, 2) << mode;
    EXPECT_EQ(missing.err, "plumb: error: " + dir + "/absent: cannot read the checkpoint "
                           "directory: No such file or directory\n") << mode;
    const test::Run file = plumb(mode + " " + dir + "/file");
    EXPECT_EQ(file.exit_code, 2) << mode;
    EXPECT_EQ(file.err, "plumb: error: " + dir + "/file: not a directory; expected the "
                        "checkpoint directory\n") << mode;
  }
  EXPECT_EQ(plumb("seal").exit_code, 2);
  EXPECT_EQ(plumb("").exit_code, 2);
}

// Root reads everything: the unreadable folder is tried as user nobody.
TEST(CheckpointCli, AnUnreadableDirIsOneLineWithExitTwo) {
  const std::string dir = iteration("ckpt-unreadable");
  const std::string as_nobody =
      geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  if (run_command(as_nobody + "test -x " + fs::path(dir).parent_path().string()).exit_code != 0) {
    GTEST_SKIP() << "the test folder is not reachable as user nobody";
  }
  fs::permissions(dir, fs::perms::none);
  for (const std::string mode : {"seal", "verify", "find"}) {
    const test::Run r = run_command(as_nobody + kPlumb + " checkpoint " + mode + " " + dir);
    EXPECT_EQ(r.exit_code, 2) << mode;
    EXPECT_EQ(r.err, "plumb: error: " + dir + ": cannot read the checkpoint directory: "
                     "Permission denied\n") << mode;
  }
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(dir + "/plumb-checkpoint.json"));
}

}  // namespace
}  // namespace plumb::test
