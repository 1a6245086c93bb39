#include "supervise/patterns.h"

#include <fmt/format.h>

#include <charconv>

#include "common/error.h"

namespace plumb::supervise {
namespace {

LinePattern make(std::string name, std::string literal, const char* regex) {
  return {std::move(name), std::move(literal),
          std::regex(regex, std::regex::ECMAScript | std::regex::optimize)};
}

}  // namespace

std::vector<LinePattern> default_progress_patterns() {
  std::vector<LinePattern> out;
  // Megatron-LM training_log: " [2024-05-01 10:00:00] iteration      100/   10000 | consumed ..."
  out.push_back(make("megatron", "iteration", R"(\biteration\s+(\d+)/\s*\d+\s*\|)"));
  // DeepSpeed engine: "[Rank 0] step=100, skipped=0, lr=[...], mom=[...]"
  out.push_back(make("deepspeed", "step=", R"(\bstep=(\d+),\s*skipped=)"));
  // torchtitan: "step:  10  loss:  9.5432  memory: 12.3GiB(15.6%) ..."
  out.push_back(make("torchtitan", "step:", R"(\bstep:\s*(\d+)\s+loss:)"));
  // Hugging Face Trainer (tqdm): " 12%|█▏        | 120/1000 [01:02<07:37,  1.92it/s]"
  out.push_back(make("hf-trainer", "%|", R"(%\|[^|]*\|\s*(\d+)/\d+\s*\[)"));
  // plumb.train-events/1 JSONL: {"event": "step", "step": 120, ...}
  out.push_back(make("plumb-train-events", "\"step\"", R"("event"\s*:\s*"step".*"step"\s*:\s*(\d+))"));
  return out;
}

std::vector<LinePattern> default_fatal_patterns() {
  std::vector<LinePattern> out;
  // NCCL: "NCCL WARN ... " / "ncclInternalError" / "NCCL error in: ..."; watchdog timeouts.
  out.push_back(make("nccl-error", "NCCL", R"(NCCL (error|WARN .*(failed|timeout|Error))|Watchdog caught collective operation timeout)"));
  out.push_back(make("nccl-result", "nccl", R"(\bnccl(InternalError|SystemError|InvalidUsage|RemoteError)\b)"));
  // HCCL: "HCCL ... ERROR" lines and its EI/EJ error codes.
  out.push_back(make("hccl-error", "HCCL", R"(HCCL.*(ERROR|error|timeout|Timeout))"));
  // CUDA and Ascend ACL runtime errors.
  out.push_back(make("cuda-error", "CUDA error", R"(CUDA error)"));
  out.push_back(make("acl-error", "ACL", R"(\bACL (error|ERROR)|aclrt\w+ failed)"));
  // Device memory and hardware faults.
  out.push_back(make("out-of-memory", "out of memory", R"(out of memory)"));
  out.push_back(make("ecc", "ECC", R"(uncorrectable ECC|ECC error)"));
  out.push_back(make("xid", "Xid", R"(\bXid\b)"));
  return out;
}

LinePattern user_pattern(const std::string& option, const std::string& pattern) {
  try {
    return {option, "", std::regex(pattern, std::regex::ECMAScript | std::regex::optimize)};
  } catch (const std::regex_error&) {
    throw Error(fmt::format("{} '{}': not a valid regular expression", option, pattern));
  }
}

std::optional<LineMatch> match_line(const std::vector<LinePattern>& patterns,
                                    std::string_view line) {
  for (const LinePattern& p : patterns) {
    if (!p.literal.empty() && line.find(p.literal) == std::string_view::npos) continue;
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, p.regex)) continue;
    LineMatch out{&p, std::nullopt};
    if (m.size() > 1 && m[1].matched) {
      int64_t step = 0;
      std::string_view digits(&*m[1].first, static_cast<size_t>(m[1].length()));
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
      if (ec == std::errc() && end == digits.data() + digits.size()) out.step = step;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace plumb::supervise
