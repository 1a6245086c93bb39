// Reporters for sysinfo::EnvRecord: a console listing and JSON (schema plumb.env/1).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "sysinfo/system_info.h"

namespace plumb::report {

class EnvReporter {
 public:
  virtual ~EnvReporter() = default;
  virtual void report(const sysinfo::EnvRecord& record, std::ostream& out) const = 0;
};

// "name  value  (source)" per item, then the variables.
class EnvConsoleReporter final : public EnvReporter {
 public:
  void report(const sysinfo::EnvRecord& record, std::ostream& out) const override;
};

class EnvJsonReporter final : public EnvReporter {
 public:
  void report(const sysinfo::EnvRecord& record, std::ostream& out) const override;
};

// {"schema", "created", "host", "versions": {name: value|null}, "sources": {name: source},
//  "env": {NAME: value}}
nlohmann::json env_record_json(const sysinfo::EnvRecord& record);

}  // namespace plumb::report
