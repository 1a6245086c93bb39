#include "check/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::check {
namespace {

CheckResult result(Status status, std::string value, std::string expected, std::string detail) {
  CheckResult r;
  r.status = status;
  r.value = std::move(value);
  r.expected = std::move(expected);
  r.detail = std::move(detail);
  return r;
}

std::string kind_of(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return fmt::format("'{}'", node.Scalar());
}

}  // namespace

CheckResult ok(std::string value, std::string expected, std::string detail) {
  return result(Status::kOk, std::move(value), std::move(expected), std::move(detail));
}
CheckResult warning(std::string value, std::string expected, std::string detail) {
  return result(Status::kWarning, std::move(value), std::move(expected), std::move(detail));
}
CheckResult critical(std::string value, std::string expected, std::string detail) {
  return result(Status::kCritical, std::move(value), std::move(expected), std::move(detail));
}
CheckResult unknown(std::string detail, std::string expected) {
  return result(Status::kUnknown, {}, std::move(expected), std::move(detail));
}
CheckResult skipped(std::string why) {
  CheckResult r = result(Status::kOk, {}, {}, std::move(why));
  r.skipped = true;
  return r;
}

CheckSection::CheckSection(YAML::Node node, std::string source, std::string where)
    : node_(std::move(node)), source_(std::move(source)), where_(std::move(where)) {}

std::string CheckSection::at(std::string_view key) const {
  const YAML::Node v = value(key);
  const int line = v.IsDefined() ? yaml_line(v) : yaml_line(node_);
  return fmt::format("{}:{}: {}.{}", source_, line, where_, key);
}

YAML::Node CheckSection::value(std::string_view key) const {
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& entry : node_) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool CheckSection::has(std::string_view key) const {
  const YAML::Node v = value(key);
  return v.IsDefined() && !v.IsNull();
}

std::optional<double> CheckSection::number(std::string_view key, const NumberRange& range) const {
  if (!has(key)) return std::nullopt;
  std::string problem;
  const std::optional<double> n = yaml_number(value(key), range, problem);
  if (!n) throw Error(fmt::format("{}: {}", at(key), problem));
  return n;
}

std::optional<std::string> CheckSection::text(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const YAML::Node v = value(key);
  if (!v.IsScalar()) throw Error(fmt::format("{}: must be a single value, got {}", at(key), kind_of(v)));
  return v.Scalar();
}

std::optional<bool> CheckSection::flag(std::string_view key) const {
  const std::optional<std::string> t = text(key);
  if (!t) return std::nullopt;
  if (*t == "true" || *t == "yes") return true;
  if (*t == "false" || *t == "no") return false;
  throw Error(fmt::format("{}: must be true or false, got '{}'", at(key), *t));
}

std::optional<std::string> CheckSection::choice(std::string_view key,
                                               std::span<const std::string> allowed) const {
  const std::optional<std::string> t = text(key);
  if (!t || std::find(allowed.begin(), allowed.end(), *t) != allowed.end()) return t;
  throw Error(fmt::format("{}: must be one of {}, got '{}'", at(key), join(allowed, ", "), *t));
}

std::vector<std::string> CheckSection::text_list(std::string_view key) const {
  std::vector<std::string> items;
  if (!has(key)) return items;
  const YAML::Node v = value(key);
  if (!v.IsSequence()) throw Error(fmt::format("{}: must be a list, got {}", at(key), kind_of(v)));
  for (const YAML::Node& item : v) {
    if (!item.IsScalar()) {
      throw Error(fmt::format("{}: every item must be a single value, got {}", at(key), kind_of(item)));
    }
    items.push_back(item.Scalar());
  }
  return items;
}

std::vector<std::pair<std::string, std::string>> CheckSection::text_map(std::string_view key) const {
  std::vector<std::pair<std::string, std::string>> items;
  if (!has(key)) return items;
  const YAML::Node v = value(key);
  if (!v.IsMap()) throw Error(fmt::format("{}: must be a map, got {}", at(key), kind_of(v)));
  for (const auto& entry : v) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) {
      throw Error(fmt::format("{}: every entry must be 'name: value', got {} at line {}", at(key),
                              kind_of(entry.second), yaml_line(entry.second)));
    }
    items.emplace_back(entry.first.Scalar(), entry.second.Scalar());
  }
  return items;
}

std::span<const CheckSpec> node_checks() {
  static const std::vector<CheckSpec> kTable = [] {
    std::vector<CheckSpec> all;
    for (auto group : {accelerator_checks, pcie_checks, network_checks, host_checks, version_checks}) {
      for (CheckSpec& spec : group()) all.push_back(std::move(spec));
    }
    return all;
  }();
  return kTable;
}

const CheckSpec* find_check(std::string_view name) {
  for (const CheckSpec& spec : node_checks()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace plumb::check
