// libFuzzer target: any bytes as a server's /metrics page (serve/prom_text.h, what plumb serve's
// scrape reads from vLLM, TGI, Triton and MindIE). The reader throws only plumb::Error, and what
// it returns keeps its promises: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
// [a-zA-Z_][a-zA-Z0-9_]* and each once per sample, a TYPE only from the five the format knows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/error.h"
#include "serve/prom_text.h"

namespace {

bool name_ok(const std::string& name, bool colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void check(const plumb::serve::PromText& text) {
  for (const auto& sample : text.samples) {
    if (!name_ok(sample.name, true)) std::abort();
    for (std::size_t i = 0; i < sample.labels.size(); ++i) {
      if (!name_ok(sample.labels[i].first, false)) std::abort();
      for (std::size_t j = 0; j < i; ++j)
        if (sample.labels[j].first == sample.labels[i].first) std::abort();
    }
  }
  for (const auto& [family, type] : text.types) {
    if (!name_ok(family, true)) std::abort();
    if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" &&
        type != "untyped")
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(plumb::serve::parse_prom_text(text, "fuzz.prom"));
  } catch (const plumb::Error&) {
  }
  return 0;
}
