// What a metric source hands the exporter: Prometheus metric families with their samples, in
// base units (bytes, seconds, ratios, watts, degrees Celsius). Rendering them as the text
// exposition format is exposition.h's job; the names plumb exports are in series.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace plumb::exporter {

using Labels = std::vector<std::pair<std::string, std::string>>;  // in the order written

struct Sample {
  Labels labels;
  double value = 0;
  std::string suffix;  // "" or "_sum", "_count", "_bucket" for summaries and histograms
};

struct Family {
  std::string name;
  std::string help;
  std::string type;  // "gauge", "counter", "summary", "histogram", "untyped"
  std::vector<Sample> samples;
};

using Families = std::vector<Family>;

}  // namespace plumb::exporter
