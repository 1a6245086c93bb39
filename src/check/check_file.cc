#include "check/check_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::check {
namespace {

const std::vector<std::string> kTopKeys = {"schema", "sku",    "host",   "created",
                                           "settings", "burn_in", "checks"};
const std::vector<std::string> kBurnInKeys = {"collective", "bytes", "busbw_gbps", "baseline_share",
                                              "h2d_gbps"};
const std::vector<std::string> kSettingKeys = {"tool_timeout_s", "checkpoint_dir"};
// A tool that has not answered in a minute is hung; Slurm kills its HealthCheckProgram at 60 s.
constexpr NumberRange kToolTimeoutRange{0.1, 60.0};

std::vector<std::string> check_names() {
  std::vector<std::string> names;
  for (const CheckSpec& spec : node_checks()) names.push_back(spec.name);
  return names;
}

void add(std::vector<std::string>& problems, const std::string& source, int line,
         const std::string& message) {
  problems.push_back(fmt::format("{}:{}: {}", source, line, message));
}

void add_key_problems(std::vector<std::string>& problems, const std::string& source,
                      const YAML::Node& map, std::span<const std::string> known,
                      std::string_view where) {
  for (const YamlProblem& p : key_problems(map, known, where)) add(problems, source, p.line, p.message);
}

void read_settings(CheckFile& file, const YAML::Node& settings, std::vector<std::string>& problems) {
  if (!settings.IsDefined() || settings.IsNull()) return;
  if (!settings.IsMap()) {
    add(problems, file.source, yaml_line(settings), "settings: must be a map");
    return;
  }
  add_key_problems(problems, file.source, settings, kSettingKeys, "settings");
  if (const YAML::Node t = settings["tool_timeout_s"]; t.IsDefined()) {
    std::string problem;
    file.tool_timeout_s = yaml_number(t, kToolTimeoutRange, problem);
    if (!file.tool_timeout_s) add(problems, file.source, yaml_line(t), "settings.tool_timeout_s: " + problem);
  }
  if (const YAML::Node d = settings["checkpoint_dir"]; d.IsDefined() && d.IsScalar()) {
    file.checkpoint_dir = d.Scalar();
  }
}

// Each check's section: a known name, a map, known keys.
void read_checks(CheckFile& file, const YAML::Node& checks, std::vector<std::string>& problems) {
  if (!checks.IsDefined() || checks.IsNull()) return;
  if (!checks.IsMap()) {
    add(problems, file.source, yaml_line(checks), "checks: must be a map of check name to its section");
    return;
  }
  const std::vector<std::string> names = check_names();
  add_key_problems(problems, file.source, checks, names, "checks");
  for (const auto& entry : checks) {
    const CheckSpec* spec = entry.first.IsScalar() ? find_check(entry.first.Scalar()) : nullptr;
    if (spec == nullptr || entry.second.IsNull()) continue;
    if (!entry.second.IsMap()) {
      add(problems, file.source, yaml_line(entry.second),
          fmt::format("checks.{}: must be a map (its expected values and thresholds)", spec->name));
      continue;
    }
    std::vector<std::string> keys = spec->keys;
    keys.push_back("enabled");
    add_key_problems(problems, file.source, entry.second, keys, "checks." + spec->name);
  }
  file.checks = checks;
}

YAML::Node section_node(const CheckFile& file, std::string_view name) {
  if (!file.checks.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& entry : file.checks) {
    if (entry.first.IsScalar() && entry.first.Scalar() == name) return entry.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

}  // namespace

CheckSection CheckFile::section(const CheckSpec& spec) const {
  return CheckSection(section_node(*this, spec.name), source, "checks." + spec.name);
}

bool CheckFile::enabled(const CheckSpec& spec) const {
  const std::optional<bool> on = section(spec).flag("enabled");
  return on.value_or(true);
}

CheckFile load_check_file(const std::string& path) {
  return parse_check_file(read_text_file(path, "check file"), path);
}

CheckFile parse_check_file(std::string_view text, const std::string& path) {
  const YAML::Node doc = load_yaml(text, path);
  CheckFile file;
  file.source = path;
  if (!doc.IsMap()) {
    throw Error(fmt::format("{}: not a check file: expected a map with 'schema: {}' and 'checks'",
                            path, kCheckFileSchema));
  }
  std::vector<std::string> problems;
  add_key_problems(problems, path, doc, kTopKeys, "");
  const YAML::Node schema = doc["schema"];
  if (schema.IsDefined() && (!schema.IsScalar() || schema.Scalar() != kCheckFileSchema)) {
    add(problems, path, yaml_line(schema),
        fmt::format("schema: expected '{}', got '{}'", kCheckFileSchema,
                    schema.IsScalar() ? schema.Scalar() : std::string("a list or map")));
  }
  if (const YAML::Node sku = doc["sku"]; sku.IsDefined() && sku.IsScalar()) file.sku = sku.Scalar();
  read_settings(file, doc["settings"], problems);
  if (const YAML::Node b = doc["burn_in"]; b.IsDefined() && !b.IsNull()) {
    if (b.IsMap()) {
      add_key_problems(problems, path, b, kBurnInKeys, "burn_in");
      file.burn_in = CheckSection(b, path, "burn_in");
    } else {
      add(problems, path, yaml_line(b), "burn_in: must be a map of plumb check burn-in's thresholds");
    }
  }
  read_checks(file, doc["checks"], problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return file;
}

std::string write_check_file(const NodeContext& context, std::string_view sku,
                             std::string_view created) {
  YAML::Emitter out;
  out << YAML::Comment(fmt::format(
      "plumb check file, written by plumb check genconf on {} at {}: this node's values are the "
      "expected ones. Review before use; `enabled: false` leaves a check out.",
      context.host, created));
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << kCheckFileSchema;
  out << YAML::Key << "sku" << YAML::Value << std::string(sku);
  out << YAML::Key << "host" << YAML::Value << context.host;
  out << YAML::Key << "created" << YAML::Value << std::string(created);
  out << YAML::Key << "settings" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "tool_timeout_s" << YAML::Value << context.tool_timeout_s;
  if (!context.checkpoint_dir.empty()) {
    out << YAML::Key << "checkpoint_dir" << YAML::Value << context.checkpoint_dir;
  }
  out << YAML::EndMap;
  out << YAML::Key << "checks" << YAML::Value << YAML::BeginMap;
  for (const CheckSpec& spec : node_checks()) {
    if (!spec.observe) continue;
    const YAML::Node section = spec.observe(context);
    if (!section.IsDefined() || section.IsNull() || section.size() == 0) continue;
    out << YAML::Key << spec.name << YAML::Value << section;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace plumb::check
