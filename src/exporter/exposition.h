// Metric families as Prometheus' text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): per family "# HELP", "# TYPE",
// then one line per sample, `name{a="x",b="y"} value`.
//
// Names are the program's own (series.h): a metric name outside [a-zA-Z_:][a-zA-Z0-9_:]*, a label
// name outside [a-zA-Z_][a-zA-Z0-9_]* or starting with "__" (reserved), an unknown type or sample
// suffix is a programmer error and throws std::logic_error. Label values and help texts come from
// outside (host names, operator names from a training events file) and are never refused: they
// are escaped, and a byte that is not UTF-8 becomes U+FFFD so that the scrape stays parseable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "exporter/metrics.h"

namespace plumb::exporter {

// The Content-Type of an answer in this format.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

// A sample value: an integer (|v| < 2^63) exactly and without exponent, any other number in its
// shortest round-trip form (what Go's ParseFloat reads back to the same double), NaN, +Inf, -Inf.
void append_value(std::string& out, double value);

// A family rendered once, so that a scrape is a concatenation: "# HELP ...\n# TYPE ...\n" and
// its sample lines apart, so that families of one name from several sources share one header.
struct RenderedFamily {
  std::string name;
  std::string type;
  std::string header;
  std::string samples;
};

// Every family with at least one sample, in order; a family whose name came before is folded into
// the first one (its samples follow; its type must be the same).
std::vector<RenderedFamily> render_families(const Families& families);

// Rendered families of several sources as one exposition: one header per name, at the name's
// first appearance, then the samples of every part with that name.
void append_exposition(std::string& out, const std::vector<const std::vector<RenderedFamily>*>& parts);

// The whole exposition of `families` (render_families, then append_exposition).
std::string render_exposition(const Families& families);

}  // namespace plumb::exporter
