#include "common/number_option.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

namespace plumb {

CLI::Validator number_option(const NumberRange& range) {
  return CLI::Validator(
      [range](std::string& text) {
        std::string problem;
        const std::optional<double> v = parse_number(text, range, problem);
        if (!v) return problem;
        text = range.whole ? fmt::format("{}", static_cast<int64_t>(*v)) : fmt::format("{}", *v);
        return std::string();
      },
      describe(range));
}

}  // namespace plumb
