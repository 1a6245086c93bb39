// A reader of the Prometheus text exposition format 0.0.4 (prometheus/docs
// content/docs/instrumenting/exposition_formats.md; expfmt's TextParser is the reference): one
// sample a line, `name{label="value",...} value [timestamp_ms]`, with # HELP and # TYPE lines,
// other comments, label values with \\ \" \n escapes, NaN / +Inf / -Inf values. What serving
// engines expose at /metrics (vLLM, TGI, Triton, MindIE), read by serve/server_metrics and fuzzed
// (fuzz/prom_text.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plumb::serve {

inline constexpr std::size_t kQuoteMax = 40;  // bytes of a bad line quoted in an error

struct PromSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
};

struct PromText {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram|summary|untyped
  std::map<std::string, std::string> help;   // family -> its HELP text, unescaped
};

// Throws plumb::Error "SOURCE:LINE: expected ... (got '...')" at the first line that is not
// the format; a whole scrape is refused, as Prometheus refuses it.
PromText parse_prom_text(std::string_view text, std::string_view source);

}  // namespace plumb::serve
