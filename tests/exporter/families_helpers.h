// Looking samples up in the families a source returned (exporter tests).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exporter/metrics.h"

namespace plumb::exporter::test {

// The value of the one sample of `name` whose labels include all of `labels`; nothing when
// there is none (and a test failure when there are several).
inline std::optional<double> value_of(const Families& families, const std::string& name,
                                      const Labels& labels) {
  std::optional<double> found;
  int matches = 0;
  for (const Family& family : families) {
    if (family.name != name) continue;
    for (const Sample& sample : family.samples) {
      bool all = true;
      for (const auto& label : labels) {
        bool has = false;
        for (const auto& own : sample.labels) has = has || own == label;
        all = all && has;
      }
      if (all) {
        found = sample.value;
        ++matches;
      }
    }
  }
  return matches == 1 ? found : std::nullopt;
}

inline const Family* family_of(const Families& families, const std::string& name) {
  for (const Family& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

}  // namespace plumb::exporter::test
