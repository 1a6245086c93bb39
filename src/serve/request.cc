#include "serve/request.h"

#include <ctime>

namespace plumb::serve {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none: return "none";
    case ErrorKind::connect: return "connect";
    case ErrorKind::http_status: return "http_status";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::dropped: return "dropped";
    case ErrorKind::malformed: return "malformed";
    case ErrorKind::server: return "server";
  }
  return "none";
}

std::vector<ErrorKind> error_kinds() {
  return {ErrorKind::connect,  ErrorKind::http_status, ErrorKind::timeout,
          ErrorKind::dropped,  ErrorKind::malformed,   ErrorKind::server};
}

std::string_view token_source_name(TokenSource source) {
  return source == TokenSource::usage ? "usage" : "chunks";
}

Nanos monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace plumb::serve
