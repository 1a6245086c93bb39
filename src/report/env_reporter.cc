#include "report/env_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/strings.h"

namespace plumb::report {

void EnvConsoleReporter::report(const sysinfo::EnvRecord& record, std::ostream& out) const {
  fmt::print(out, "# plumb env · host {} · {}\n", record.host, record.created);
  for (const sysinfo::Item& item : record.items) {
    fmt::print(out, "{:<14} {:<40} ({})\n", item.name, item.value.value_or("not found"),
               item.source);
  }
  std::vector<std::string> prefixes;
  for (std::string_view p : sysinfo::env_prefixes()) prefixes.emplace_back(p);
  fmt::print(out, "#\n# environment: {} variable{} ({}*)\n", record.env.size(),
             record.env.size() == 1 ? "" : "s", join(prefixes, "* "));
  for (const auto& [name, value] : record.env) fmt::print(out, "{}={}\n", name, value);
}

nlohmann::json env_record_json(const sysinfo::EnvRecord& record) {
  nlohmann::json versions = nlohmann::json::object();
  nlohmann::json sources = nlohmann::json::object();
  for (const sysinfo::Item& item : record.items) {
    versions[item.name] = item.value ? nlohmann::json(*item.value) : nlohmann::json(nullptr);
    sources[item.name] = item.source;
  }
  return {{"schema", sysinfo::kEnvSchema}, {"created", record.created}, {"host", record.host},
          {"versions", versions},          {"sources", sources},        {"env", record.env}};
}

void EnvJsonReporter::report(const sysinfo::EnvRecord& record, std::ostream& out) const {
  out << env_record_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

}  // namespace plumb::report
