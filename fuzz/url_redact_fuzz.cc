// libFuzzer target: any bytes as a URL a user gave (--to). redact_url, url_secrets and
// mask_secrets must return (never throw, never read out of bounds); a URL with nothing to mask
// comes back as it was, and every secret url_secrets names is gone from mask_secrets' output
// of the URL itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/url_redact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view url(reinterpret_cast<const char*>(data), size);
  const std::string shown = plumb::redact_url(url);
  const std::vector<std::string> secrets = plumb::url_secrets(url);
  if (secrets.empty() && shown != url) std::abort();
  const std::string masked = plumb::mask_secrets(url, secrets);
  for (const std::string& s : secrets) {
    // A secret holding the mask's own characters may be re-formed by a replacement next to it.
    if (s.size() >= plumb::kMinSecretInText && s.find('*') == std::string::npos &&
        masked.find(s) != std::string::npos) {
      std::abort();
    }
  }
  return 0;
}
