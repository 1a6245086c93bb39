#include "exporter/http_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace plumb::exporter {
namespace {

using State = HttpParse::State;

HttpParse error(int status, std::string message) {
  HttpParse p;
  p.state = State::kError;
  p.status = status;
  p.message = std::move(message);
  return p;
}

// RFC 9110 section 5.6.2: the characters of a token (method, header name).
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The path of a request target: origin form "/a?b", absolute form "http://host/a?b", or "*".
std::optional<std::string> target_path(std::string_view target) {
  if (target == "*") return std::string(target);
  if (target.front() != '/') {
    const std::string head = lower(target.substr(0, 8));
    if (head.rfind("http://", 0) != 0 && head.rfind("https://", 0) != 0) return std::nullopt;
    const size_t slash = target.find('/', target.find("://") + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  return std::string(target.substr(0, target.find_first_of("?#")));
}

// "GET /metrics HTTP/1.1": exactly three parts separated by single spaces.
std::optional<HttpParse> parse_request_line(std::string_view line, HttpParse& p, int& minor) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  const std::string_view version =
      sp2 == std::string_view::npos ? std::string_view() : line.substr(sp2 + 1);
  const std::string_view target =
      sp2 == std::string_view::npos ? std::string_view() : line.substr(sp1 + 1, sp2 - sp1 - 1);
  const bool visible = std::all_of(target.begin(), target.end(),
                                   [](char c) { return c > 0x20 && c < 0x7f; });
  if (!is_token(line.substr(0, sp1)) || target.empty() || !visible ||
      version.size() != 8 || version.substr(0, 5) != "HTTP/" ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[7]))) {
    return error(400, "malformed request line: expected METHOD TARGET HTTP/1.1");
  }
  if (version[5] != '1') {
    return error(505, fmt::format("{} is not supported: use HTTP/1.1 or HTTP/1.0", version));
  }
  const std::optional<std::string> path = target_path(target);
  if (!path) return error(400, "malformed request target: expected a path (/metrics)");
  minor = version[7] - '0';
  p.request.method = std::string(line.substr(0, sp1));
  p.request.target = std::string(target);
  p.request.path = *path;
  return std::nullopt;
}

// "Name: value" (RFC 9112 section 5): no space before the colon, no folded continuation line,
// no control character but tab in the value.
std::optional<HttpParse> parse_header_line(std::string_view line, int number, HttpParse& p) {
  if (line.front() == ' ' || line.front() == '\t') {
    return error(400, fmt::format("header line {}: folded continuation lines are not accepted",
                                  number));
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
    return error(400, fmt::format("malformed header line {}: expected NAME: VALUE", number));
  }
  const std::string_view value = trim_ows(line.substr(colon + 1));
  const bool clean = std::all_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
  if (!clean) {
    return error(400, fmt::format("header line {}: control character in the value", number));
  }
  p.request.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
  return std::nullopt;
}

// Whether the comma-separated Connection header holds `token` (case-insensitive).
bool connection_has(const HttpRequest& r, std::string_view token) {
  for (const auto& [name, value] : r.headers) {
    if (name != "connection") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (lower(trim_ows(rest.substr(0, comma))) == token) return true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return false;
}

// The body's length from Content-Length (every copy the same number), or an error: a
// Transfer-Encoding (chunked bodies are not read), a value that is not a number, too large.
std::optional<HttpParse> body_length(const HttpRequest& r, const HttpLimits& limits,
                                     std::size_t& length) {
  std::optional<std::string> seen;
  for (const auto& [name, value] : r.headers) {
    if (name == "transfer-encoding") {
      if (lower(value).find("chunked") != std::string::npos) {
        return error(411, "chunked request bodies are not supported: send Content-Length");
      }
      return error(501, "Transfer-Encoding is not supported: send the body with Content-Length");
    }
    if (name != "content-length") continue;
    if (value.empty() || !std::all_of(value.begin(), value.end(),
                                           [](char c) { return c >= '0' && c <= '9'; })) {
      return error(400, "Content-Length is not a number of bytes");
    }
    if (seen && *seen != value) return error(400, "two different Content-Length headers");
    seen = value;
  }
  length = 0;
  if (!seen) return std::nullopt;
  std::string_view digits = *seen;
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  const bool too_large = digits.size() > 18;
  if (!too_large) length = std::stoull(std::string(digits));
  if (too_large || length > limits.max_body_bytes) {
    return error(413, fmt::format("request body larger than the limit of {} bytes",
                                  limits.max_body_bytes));
  }
  return std::nullopt;
}

HttpParse header_too_large(const HttpLimits& limits) {
  return error(431, fmt::format("request line and headers larger than the limit of {} bytes",
                                limits.max_header_bytes));
}

// After the blank line: the body, keep-alive and HEAD.
HttpParse finish(std::string_view buffer, std::size_t header_end, int minor, HttpParse p,
                 const HttpLimits& limits) {
  std::size_t length = 0;
  if (auto e = body_length(p.request, limits, length)) return *e;
  if (buffer.size() - header_end < length) return HttpParse{};
  p.request.body = std::string(buffer.substr(header_end, length));
  p.consumed = header_end + length;
  p.keep_alive = minor == 1 ? !connection_has(p.request, "close")
                            : connection_has(p.request, "keep-alive");
  p.head = p.request.method == "HEAD";
  p.state = State::kComplete;
  return p;
}

}  // namespace

HttpParse parse_http_request(std::string_view buffer, const HttpLimits& limits) {
  HttpParse p;
  int minor = 1;
  bool request_line = false;
  int number = 0;
  for (std::size_t pos = 0;;) {
    const size_t nl = buffer.find('\n', pos);
    // Leading blank lines count against the limit too: they cannot fill memory either.
    if (nl == std::string_view::npos) {
      return buffer.size() > limits.max_header_bytes ? header_too_large(limits) : HttpParse{};
    }
    if (nl + 1 > limits.max_header_bytes) return header_too_large(limits);
    std::string_view line = buffer.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;
    if (!request_line) {
      if (line.empty()) continue;
      if (auto e = parse_request_line(line, p, minor)) return *e;
      request_line = true;
    } else if (line.empty()) {
      return finish(buffer, pos, minor, std::move(p), limits);
    } else if (auto e = parse_header_line(line, ++number, p)) {
      return *e;
    }
  }
}

std::string_view http_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

void append_http_response(std::string& out, const HttpResponse& r, bool keep_alive, bool head) {
  // RFC 9110 section 15.3.5: a 204 has neither a body nor a Content-Length.
  const bool no_body = r.status == 204;
  out += fmt::format("HTTP/1.1 {} {}\r\n", r.status, http_reason(r.status));
  if (!no_body) {
    out += fmt::format("Content-Type: {}\r\nContent-Length: {}\r\n", r.content_type,
                       r.body.size());
  }
  for (const auto& [name, value] : r.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head && !no_body) out += r.body;
}

std::string HttpRequest::header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

}  // namespace plumb::exporter
