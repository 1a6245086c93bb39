// libFuzzer target: any bytes as what names a store (issue 33) -- a --db / PLUMB_DB value and a
// config file. redact_store_url, store_url_secrets and mask_store_message must return (never
// throw, never read out of bounds); no password store_url_secrets names survives in the masked
// URL; a value that is not a postgresql:// URL comes back as it was. parse_config must succeed or
// throw plumb::Error, never anything else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/store_url.h"
#include "common/config.h"
#include "common/error.h"
#include "common/url_redact.h"

namespace {

void check_url(std::string_view url) {
  const std::string shown = plumb::baseline::redact_store_url(url);
  const std::vector<std::string> secrets = plumb::baseline::store_url_secrets(url);
  if (secrets.empty() && shown != url) std::abort();
  const std::string masked = plumb::baseline::mask_store_message(url, url);
  for (const std::string& s : secrets) {
    // A secret holding the mask's own characters may be re-formed by a replacement next to it.
    if (s.size() >= plumb::kMinSecretInText && s.find('*') == std::string::npos &&
        masked.find(s) != std::string::npos) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_url(text);
  try {
    const plumb::Config config = plumb::parse_config(text, "config.yaml");
    if (config.store) check_url(config.store->value);
  } catch (const plumb::Error&) {
    // a clear refusal is the right answer to a wrong file
  }
  return 0;
}
