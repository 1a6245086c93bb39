#include "sysinfo/version_text.h"

#include <fmt/format.h>

#include <cctype>
#include <sstream>

namespace plumb::sysinfo {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Calls fn(key, value) for each "key<sep>value" line, both trimmed.
template <class Fn>
void for_each_pair(std::string_view text, char sep, Fn&& fn) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find(sep);
    if (at == std::string::npos) continue;
    if (fn(trim(std::string_view(line).substr(0, at)), trim(std::string_view(line).substr(at + 1)))) {
      return;
    }
  }
}

}  // namespace

std::optional<std::string> key_value(std::string_view text, std::string_view key) {
  std::optional<std::string> found;
  for_each_pair(text, '=', [&](std::string_view k, std::string_view v) {
    if (!iequals(k, key)) return false;
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
      v = v.substr(1, v.size() - 2);
    }
    found = std::string(v);
    return true;
  });
  if (found && found->empty()) return std::nullopt;
  return found;
}

std::optional<std::string> os_pretty_name(std::string_view os_release) {
  return key_value(os_release, "PRETTY_NAME");
}

std::optional<std::string> cpu_model(std::string_view cpuinfo) {
  std::optional<std::string> found;
  for (std::string_view key : {"model name", "Model", "CPU part"}) {
    for_each_pair(cpuinfo, ':', [&](std::string_view k, std::string_view v) {
      if (k != key || v.empty()) return false;
      found = std::string(v);
      return true;
    });
    if (found) return found;
  }
  return found;
}

int cpu_count(std::string_view cpuinfo) {
  int count = 0;
  for_each_pair(cpuinfo, ':', [&](std::string_view k, std::string_view) {
    if (k == "processor") ++count;
    return false;
  });
  return count;
}

std::optional<std::string> nvidia_driver_version(std::string_view text) {
  const size_t at = text.find("Kernel Module");
  if (at == std::string_view::npos) return std::nullopt;
  std::istringstream words{std::string(text.substr(at + 13))};
  std::string version;
  if (!(words >> version) || version.empty() || !std::isdigit(static_cast<unsigned char>(version[0]))) {
    return std::nullopt;
  }
  return version;
}

std::string nccl_version(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::string cuda_version(int code) { return fmt::format("{}.{}", code / 1000, code % 1000 / 10); }

}  // namespace plumb::sysinfo
