// libFuzzer target: any bytes as a checkpoint pointer file, read as Megatron-LM's
// latest_checkpointed_iteration.txt and as DeepSpeed's latest (and as a folder name's step).
// Reading must never crash or throw; what it returns must hold together: a usable tracker names
// "release" (step 0) or an iteration > 0, a usable `latest` names a folder beside it, and every
// problem is safe to print (the file's bytes escaped).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/strings.h"
#include "supervise/checkpoint_format.h"

namespace {

using plumb::supervise::PointerText;

void check_megatron(const PointerText& t) {
  if (plumb::terminal_safe(t.problem) != t.problem) std::abort();
  if (!t.problem.empty()) return;
  if (!t.step || *t.step < 0) std::abort();
  if (*t.step == 0 && t.said != "release") std::abort();
}

void check_deepspeed(const PointerText& t) {
  if (plumb::terminal_safe(t.problem) != t.problem) std::abort();
  if (t.step && *t.step < 0) std::abort();
  if (!t.problem.empty()) return;
  if (t.said.empty() || t.said == "." || t.said == ".." ||
      t.said.find('/') != std::string_view::npos) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_megatron(plumb::supervise::read_megatron_tracker_text(text));
  check_deepspeed(plumb::supervise::read_deepspeed_latest_text(text));
  if (const auto step = plumb::supervise::step_in_name(text); step && *step < 0) std::abort();
  return 0;
}
