// The CLI11 check of a number option: the value within a NumberRange, or "--opt: must be
// <range>, got 'x'" (common/number_range.h words it). Its own header, so that number_range.h
// stays free of CLI11.
#pragma once

#include <CLI/CLI.hpp>

#include "common/number_range.h"

namespace plumb {

// A count is rewritten as the integer CLI11 then converts ("1e3" → "1000"): options take it
// with transform(), as check() would discard the rewrite.
CLI::Validator number_option(const NumberRange& range);

}  // namespace plumb
