#include "baseline/store_url.h"

#include <cctype>
#include <string>

#include "common/url_redact.h"

namespace plumb::baseline {
namespace {

constexpr std::string_view kSchemes[] = {"postgresql://", "postgres://"};

// Where each password of `url` sits: [begin, end) ranges, the userinfo's first.
std::vector<std::pair<size_t, size_t>> password_spans(std::string_view url) {
  std::vector<std::pair<size_t, size_t>> spans;
  const size_t start = url.find("://");
  if (start == std::string_view::npos) return spans;
  const size_t authority = start + 3;
  const size_t end = url.find_first_of("/?", authority);
  const std::string_view auth = url.substr(authority, end == std::string_view::npos ? url.npos : end - authority);
  const size_t at = auth.rfind('@');
  if (at != std::string_view::npos) {
    const size_t colon = auth.substr(0, at).find(':');
    // An empty password (`user:@`) hides nothing: shown as written.
    if (colon != std::string_view::npos && colon + 1 < at) {
      spans.emplace_back(authority + colon + 1, authority + at);
    }
  }
  const size_t query = url.find('?', authority);
  for (size_t p = query; p != std::string_view::npos && p < url.size();) {
    const size_t key = p + 1;
    const size_t amp = url.find('&', key);
    const size_t stop = amp == std::string_view::npos ? url.size() : amp;
    if (url.substr(key, 9) == "password=" && key + 9 < stop) spans.emplace_back(key + 9, stop);
    p = amp;
  }
  return spans;
}

}  // namespace

bool is_postgres_url(std::string_view location) {
  for (const std::string_view scheme : kSchemes) {
    if (location.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

std::string redact_store_url(std::string_view url) {
  std::string out;
  size_t from = 0;
  for (const auto& [begin, end] : password_spans(url)) {
    out.append(url.substr(from, begin - from));
    out += kMask;
    from = end;
  }
  out.append(url.substr(from));
  return out;
}

std::vector<std::string> store_url_secrets(std::string_view url) {
  std::vector<std::string> secrets;
  for (const auto& [begin, end] : password_spans(url)) {
    const std::string raw(url.substr(begin, end - begin));
    secrets.push_back(raw);
    if (const std::string decoded = percent_decoded(raw); decoded != raw) secrets.push_back(decoded);
  }
  return secrets;
}

std::string mask_store_message(std::string_view text, std::string_view url) {
  std::string line;
  for (const char c : text) {  // libpq's messages span lines ("...failed: FATAL:  ...\n\tIs ...")
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::vector<std::string> secrets = store_url_secrets(url);
  std::string masked = mask_secrets(line, secrets);
  for (const std::string& s : secrets) {  // short ones too: a message is not free text
    for (size_t at = masked.find(s); !s.empty() && at != std::string::npos; at = masked.find(s, at + 3)) {
      masked.replace(at, s.size(), kMask);
    }
  }
  return masked;
}

}  // namespace plumb::baseline
