#include "serve/datasets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace plumb::serve {
namespace {

using nlohmann::json;

// vLLM's sharegpt sampler drops prompts or completions shorter than this many tokens
// (benchmarks/benchmark_dataset.py, is_valid_sequence: min_len = 4).
constexpr int kMinShareGptTokens = 4;

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = {"jsonl", "sharegpt", "trace"};
  return names;
}

// Calls `each(line_text, line_number)` for every line that is not blank.
template <typename F>
void for_each_line(std::string_view text, F each) {
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = trim_blanks(text.substr(0, end));
    ++number;
    if (!line.empty()) each(line, number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// JsonFields::integer checks the low bound of signed values only (0 parses as unsigned), so the
// count's 1 is checked here with the same words.
int tokens_field(const JsonFields& fields, const json& object, const char* key) {
  const auto n = fields.integer(object, "", key, 0, kMaxDatasetTokens);
  if (n < 1) {
    fields.fail(key, fmt::format("expected a whole number from 1 to {}, got {}", kMaxDatasetTokens,
                                 JsonFields::shown(object[key])));
  }
  return static_cast<int>(n);
}

DatasetEntry prompt_line(const json& object, const JsonFields& fields) {
  const char* key = object.contains("prompt") ? "prompt" : "text";
  if (!object.contains(key) || !object[key].is_string()) {
    throw Error(fields.file() + ": expected \"prompt\" or \"text\" (a string)");
  }
  DatasetEntry entry;
  entry.prompt = object[key].get<std::string>();
  entry.input_tokens = estimate_tokens(entry.prompt);
  for (const char* out : {"output_tokens", "max_tokens"}) {
    if (object.contains(out)) entry.output_tokens = tokens_field(fields, object, out);
  }
  return entry;
}

DatasetEntry trace_line(const json& object, const JsonFields& fields) {
  DatasetEntry entry;
  const double at = fields.number(object, "", "timestamp");
  if (at < 0) fields.fail("timestamp", fmt::format("expected 0 or more ms, got {}", at));
  entry.at_ms = at;
  entry.input_tokens = tokens_field(fields, object, "input_length");
  entry.output_tokens = tokens_field(fields, object, "output_length");
  return entry;
}

std::vector<DatasetEntry> read_lines(std::string_view text, const std::string& file,
                                     DatasetFormat format) {
  std::vector<DatasetEntry> entries;
  for_each_line(text, [&](std::string_view line, int number) {
    const std::string where = fmt::format("{}:{}", file, number);
    const json object = parse_json(line, where);
    if (!object.is_object())
      throw Error(where + ": expected a JSON object, got " + JsonFields::shown(object));
    const JsonFields fields(where);
    entries.push_back(format == DatasetFormat::trace ? trace_line(object, fields)
                                                     : prompt_line(object, fields));
    if (format == DatasetFormat::trace && entries.size() > 1 &&
        *entries.back().at_ms < *entries[entries.size() - 2].at_ms) {
      throw Error(
          fmt::format("{}: timestamp {} is before the previous line's {}; a trace's lines "
                      "must be in time order",
                      where, *entries.back().at_ms, *entries[entries.size() - 2].at_ms));
    }
  });
  return entries;
}

// One ShareGPT conversation: its first turn the prompt, its second the completion; nothing when
// it has fewer than two turns or either is shorter than vLLM keeps.
std::optional<DatasetEntry> conversation(const json& item, const std::string& path,
                                         const JsonFields& fields) {
  const json& turns = fields.array(item, path, "conversations");
  if (turns.size() < 2) return std::nullopt;
  const std::string base = JsonFields::at(path, "conversations");
  const std::string prompt = fields.text(turns[0], base + "[0]", "value");
  const std::string answer = fields.text(turns[1], base + "[1]", "value");
  DatasetEntry entry;
  entry.input_tokens = estimate_tokens(prompt);
  entry.output_tokens = estimate_tokens(answer);
  if (entry.input_tokens < kMinShareGptTokens || entry.output_tokens < kMinShareGptTokens) {
    return std::nullopt;
  }
  entry.prompt = prompt;
  return entry;
}

std::vector<DatasetEntry> read_sharegpt(std::string_view text, const std::string& file) {
  const json doc = parse_json(text, file);
  if (!doc.is_array()) throw Error(file + ": expected a JSON array of conversations (ShareGPT)");
  const JsonFields fields(file);
  std::vector<DatasetEntry> entries;
  for (size_t i = 0; i < doc.size(); ++i) {
    if (auto entry = conversation(doc[i], fmt::format("[{}]", i), fields)) {
      entries.push_back(std::move(*entry));
    }
  }
  return entries;
}

}  // namespace

int estimate_tokens(std::string_view text) {
  const double tokens = std::ceil(static_cast<double>(text.size()) / kCharsPerToken);
  return static_cast<int>(std::clamp(tokens, 1.0, static_cast<double>(kMaxDatasetTokens)));
}

DatasetFormat parse_dataset_format(const std::string& name) {
  const auto& names = format_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<DatasetFormat>(i);
  }
  throw Error(unknown_name("--dataset-format", "format", name, names));
}

DatasetFormat guess_dataset_format(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') return DatasetFormat::sharegpt;
  const size_t end = text.find('\n', first == std::string_view::npos ? 0 : first);
  std::string problem;
  const json line = parse_json_or_discarded(
      first == std::string_view::npos ? std::string_view{} : text.substr(first, end - first),
      problem);
  const bool trace =
      line.is_object() && line.contains("timestamp") && line.contains("input_length");
  return trace ? DatasetFormat::trace : DatasetFormat::jsonl;
}

std::vector<DatasetEntry> read_dataset(std::string_view text, const std::string& file,
                                       DatasetFormat format) {
  std::vector<DatasetEntry> entries = format == DatasetFormat::sharegpt
                                          ? read_sharegpt(text, file)
                                          : read_lines(text, file, format);
  if (entries.empty()) {
    throw Error(file + (format == DatasetFormat::sharegpt
                            ? ": no conversation with two turns of at least 4 tokens"
                            : ": no prompts (an empty file)"));
  }
  return entries;
}

}  // namespace plumb::serve
