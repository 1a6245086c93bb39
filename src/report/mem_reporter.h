// `plumb mem analyze` output: the console summary and JSON (plumb.mem/1).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "mem/analysis.h"

namespace plumb::report {

void print_mem_analysis(const mem::Analysis& a, std::ostream& out);
nlohmann::json mem_analysis_json(const mem::Analysis& a);

}  // namespace plumb::report
