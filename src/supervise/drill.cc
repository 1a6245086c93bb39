#include "supervise/drill.h"

#include <signal.h>

#include <fmt/format.h>

#include <sstream>

#include "common/error.h"
#include "supervise/checkpoint.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kLookEvery{250};  // how often the checkpoint dir is listed

struct FaultEntry {
  FaultKind kind;
  const char* name;
  int signal;
};

constexpr FaultEntry kFaults[] = {
    {FaultKind::kKill, "kill", SIGKILL},
    {FaultKind::kStop, "hang", SIGSTOP},
};

const FaultEntry& entry(FaultKind kind) {
  for (const FaultEntry& f : kFaults) {
    if (f.kind == kind) return f;
  }
  return kFaults[0];
}

// The newest complete checkpoint; none while the directory is missing (the job creates it at its
// first save) or cannot be read: the drill then waits, it never stops the supervisor.
CheckpointChoice look(const std::filesystem::path& dir) {
  try {
    return find_checkpoint(dir);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

std::string fault_name(FaultKind kind) { return entry(kind).name; }

std::vector<FaultKind> parse_fault_kinds(const std::string& list) {
  std::vector<FaultKind> out;
  std::istringstream words(list);
  for (std::string word; std::getline(words, word, ',');) {
    const FaultEntry* found = nullptr;
    for (const FaultEntry& f : kFaults) {
      if (word == f.name) found = &f;
    }
    if (found == nullptr) {
      throw Error(fmt::format("--drill-faults '{}': unknown fault '{}' (known: kill, hang)", list,
                              word));
    }
    out.push_back(found->kind);
  }
  if (out.empty()) throw Error("--drill-faults: expected kill, hang or both");
  return out;
}

Drill::Drill(DrillOptions options) : options_(std::move(options)), random_(options_.seed) {}

void Drill::on_start(int process_group) {
  group_ = process_group;
  countdown_ = -1;
  pending_.reset();
  had_checkpoint_ = false;
  start_checkpoint_.reset();
  if (options_.checkpoint_dir.empty()) return;
  CheckpointChoice c = look(options_.checkpoint_dir);
  had_checkpoint_ = !c.path.empty();
  start_checkpoint_ = c.step;
}

// A checkpoint newer than the attempt's first has appeared (checked at most every 250 ms).
bool Drill::armed() {
  if (options_.checkpoint_dir.empty()) return true;
  if (Clock::now() - last_look_ < kLookEvery) return false;
  last_look_ = Clock::now();
  CheckpointChoice c = look(options_.checkpoint_dir);
  if (c.path.empty()) return false;
  if (!had_checkpoint_) return true;
  return c.step && start_checkpoint_ && *c.step > *start_checkpoint_;
}

void Drill::on_progress(std::optional<int64_t> step) {
  if (injected_ >= options_.faults || pending_ || group_ <= 0) return;
  if (countdown_ < 0) {
    if (!armed()) return;
    std::uniform_int_distribution<int> lines(1, std::max(1, options_.max_lines_after));
    countdown_ = lines(random_);
  }
  if (--countdown_ <= 0) inject(step);
}

void Drill::inject(std::optional<int64_t> step) {
  const FaultKind kind = options_.kinds[static_cast<size_t>(injected_) % options_.kinds.size()];
  pending_ = Injection{kind, Clock::now(), step};
  ::kill(-group_, entry(kind).signal);
  ++injected_;
}

std::optional<Injection> Drill::take_injection() {
  std::optional<Injection> out = pending_;
  pending_.reset();
  return out;
}

}  // namespace plumb::supervise
