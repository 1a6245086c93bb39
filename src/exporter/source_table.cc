#include "exporter/source_table.h"

namespace plumb::exporter {

// Placeholder until the sources land (issue 13): no options, no sources.
void add_source_options(CLI::App&, SourceOptions&) {}

std::vector<std::unique_ptr<Source>> make_sources(const SourceOptions&) { return {}; }

}  // namespace plumb::exporter
