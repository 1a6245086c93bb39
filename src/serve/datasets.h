// The prompt files plumb serve bench reads (--dataset FILE, docs/serve.md, "Datasets"):
//  * jsonl: one object a line, {"prompt": "..."} or {"text": "..."}, optionally "output_tokens"
//    (or "max_tokens"): the tokens to ask for;
//  * sharegpt: ShareGPT's JSON array, [{"conversations": [{"from": "human", "value": ...},
//    {"from": "gpt", "value": ...}, ...]}, ...]: the first turn is the prompt, the second's
//    length the output length (as vLLM bench serve's sharegpt dataset);
//  * trace: Mooncake's JSONL (kvcache-ai/Mooncake, FAST'25 traces), {"timestamp": ms from the
//    first request, "input_length": tokens, "output_length": tokens, "hash_ids": [...]}: each
//    line's arrival and lengths.
// Every problem names the file and its line (or the JSON path for sharegpt) and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::serve {

enum class DatasetFormat { jsonl, sharegpt, trace };

struct DatasetEntry {
  std::string prompt;           // empty for a trace: the workload writes input_tokens words
  int input_tokens = 0;         // a trace's input_length, else estimated (kCharsPerToken)
  int output_tokens = 0;        // 0: not given (the workload's --output-tokens)
  std::optional<double> at_ms;  // a trace's timestamp
};

// No tokenizer: a text's tokens are estimated as its characters / 4, the rule of thumb OpenAI
// gives for English with its BPE tokenizers ("one token is about 4 characters"), at least 1.
inline constexpr double kCharsPerToken = 4.0;
int estimate_tokens(std::string_view text);

// The largest token count a line may give (a typo such as 1e9 refused, not sent).
inline constexpr int kMaxDatasetTokens = 1'000'000;

// "jsonl", "sharegpt", "trace" -> the format; else an Error (exit 2) with did-you-mean.
DatasetFormat parse_dataset_format(const std::string& name);
// The format of `text`: a JSON array is sharegpt; JSONL whose first object has "timestamp" and
// "input_length" is a trace; other JSONL is jsonl.
DatasetFormat guess_dataset_format(std::string_view text);

// The entries of `text` (the content of `file`, named in messages). Throws plumb::Error (exit 2):
// "prompts.jsonl:3: not valid JSON: ...", "prompts.jsonl:4: expected \"prompt\" or \"text\"
// (a string)", "trace.jsonl:2: timestamp: expected a number, got \"x\"", "FILE: no prompts".
std::vector<DatasetEntry> read_dataset(std::string_view text, const std::string& file,
                                       DatasetFormat format);

}  // namespace plumb::serve
