#include "common/url_redact.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace plumb {
namespace {

// A segment this long is masked whatever it holds, and keeps kShownPrefix characters when masked:
// at 16 characters, 12 stay hidden (of a base62 token: 71 bits).
constexpr size_t kLongSegment = 16;
constexpr size_t kShownPrefix = 4;
// Letters and digits mixed in a segment this long: an id or a token, not a word.
constexpr size_t kMixedSegment = 8;

// The segments after which a webhook's path is its credential (lower case).
constexpr std::array<std::string_view, 12> kMarkers = {
    "hook", "hooks", "webhook", "webhooks", "webhookb2", "services",
    "token", "tokens", "key", "keys", "secret", "secrets"};

// One run of the URL's text, masked or shown as it is.
struct Piece {
  std::string_view text;
  bool secret = false;
  bool keep_prefix = false;
};

using Pieces = std::vector<Piece>;

void shown(Pieces& out, std::string_view text) {
  if (!text.empty()) out.push_back({text, false, false});
}

void secret(Pieces& out, std::string_view text, bool keep_prefix = false) {
  if (!text.empty()) out.push_back({text, true, keep_prefix});
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_marker(std::string_view segment) {
  const std::string l = lower(segment);
  return std::find(kMarkers.begin(), kMarkers.end(), l) != kMarkers.end();
}

bool looks_random(std::string_view segment) {
  if (segment.size() >= kLongSegment) return true;
  const auto has = [&](int (*test)(int)) {
    return std::any_of(segment.begin(), segment.end(),
                       [&](char c) { return test(static_cast<unsigned char>(c)) != 0; });
  };
  return segment.size() >= kMixedSegment && has(std::isalpha) && has(std::isdigit);
}

bool valid_scheme(std::string_view scheme) {
  if (scheme.empty() || !std::isalpha(static_cast<unsigned char>(scheme[0]))) return false;
  return std::all_of(scheme.begin(), scheme.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

// user:password@host:port — the password masked; a userinfo without ':' masked whole.
void authority(std::string_view text, Pieces& out) {
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos) return shown(out, text);
  const std::string_view userinfo = text.substr(0, at);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    secret(out, userinfo);
  } else {
    shown(out, userinfo.substr(0, colon + 1));
    secret(out, userinfo.substr(colon + 1));
  }
  shown(out, text.substr(at));
}

size_t last_nonempty_segment(const std::vector<std::string_view>& segments) {
  for (size_t i = segments.size(); i-- > 0;) {
    if (!segments[i].empty()) return i;
  }
  return segments.size();
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

void path(std::string_view text, bool last_rule, Pieces& out) {
  const std::vector<std::string_view> segments = split(text, '/');
  const size_t last = last_rule ? last_nonempty_segment(segments) : segments.size();
  bool after_marker = false;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) shown(out, "/");
    const std::string_view s = segments[i];
    if (after_marker || i == last || looks_random(s)) {
      secret(out, s, s.size() >= kLongSegment);
    } else {
      shown(out, s);
    }
    after_marker = after_marker || is_marker(s);
  }
}

// key=value&flag: every value masked, a part without '=' whole.
void query(std::string_view text, Pieces& out) {
  const std::vector<std::string_view> parts = split(text, '&');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) shown(out, "&");
    const size_t eq = parts[i].find('=');
    if (eq == std::string_view::npos) {
      secret(out, parts[i]);
    } else {
      shown(out, parts[i].substr(0, eq + 1));
      secret(out, parts[i].substr(eq + 1));
    }
  }
}

Pieces pieces(std::string_view url) {
  Pieces out;
  const size_t sep = url.find("://");
  const bool scheme = sep != std::string_view::npos && valid_scheme(url.substr(0, sep));
  if (scheme) {
    shown(out, url.substr(0, sep + 3));
    url.remove_prefix(sep + 3);
  }
  const size_t end_of_host = std::min(url.find_first_of("/?#"), url.size());
  // Without a scheme, a first part with '.', ':', '@' or '[' is a host; else it is a path.
  const bool host = scheme || (end_of_host > 0 &&
                               url.substr(0, end_of_host).find_first_of(".:@[") !=
                                   std::string_view::npos);
  if (host) {
    authority(url.substr(0, end_of_host), out);
    url.remove_prefix(end_of_host);
  }
  const size_t end_of_path = std::min(url.find_first_of("?#"), url.size());
  path(url.substr(0, end_of_path), host || !url.starts_with('/'), out);
  url.remove_prefix(end_of_path);
  const size_t hash = std::min(url.find('#'), url.size());
  if (hash > 0) {  // "?..."
    shown(out, "?");
    query(url.substr(1, hash - 1), out);
  }
  if (hash < url.size()) {
    shown(out, "#");
    secret(out, url.substr(hash + 1));
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string redact_url(std::string_view url) {
  std::string out;
  for (const Piece& p : pieces(url)) {
    if (!p.secret) {
      out += p.text;
      continue;
    }
    const std::string_view prefix = p.text.substr(0, kShownPrefix);
    if (p.keep_prefix && printable_ascii(prefix) && prefix.find('%') == std::string_view::npos) {
      out += prefix;
    }
    out += kMask;
  }
  return out;
}

std::vector<std::string> url_secrets(std::string_view url) {
  std::vector<std::string> secrets;
  for (const Piece& p : pieces(url)) {
    if (!p.secret) continue;
    secrets.emplace_back(p.text);
    std::string decoded = percent_decoded(p.text);
    if (decoded != p.text) secrets.push_back(std::move(decoded));
  }
  return secrets;
}

std::string mask_secrets(std::string_view text, std::span<const std::string> secrets) {
  std::vector<std::string_view> sorted(secrets.begin(), secrets.end());
  // Longest first, each once: a URL of many random-looking segments may name one many times.
  std::sort(sorted.begin(), sorted.end(), [](std::string_view a, std::string_view b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out(text);
  for (const std::string_view s : sorted) {
    if (s.size() < kMinSecretInText) continue;
    const size_t mask_size = std::string_view(kMask).size();
    for (size_t at = out.find(s); at != std::string::npos; at = out.find(s, at + mask_size)) {
      out.replace(at, s.size(), kMask);
    }
  }
  return out;
}

}  // namespace plumb
