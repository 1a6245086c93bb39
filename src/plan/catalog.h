// The catalogs shipped in data/: models and hardware by preset name, in the data folder of
// common/data_dir.h ($PLUMB_DATA_DIR, an installed package's share/plumb, or the source tree).
#pragma once

#include <string>
#include <vector>

namespace plumb::plan {

// The data folder (common/data_dir.h).
std::string data_dir();

// Preset names (file names without .yaml) in data/<kind>/, sorted. kind: "models", "hardware".
std::vector<std::string> preset_names(const std::string& kind);

// The file of a preset; an unknown name is a plumb::Error with a "did you mean" and the list,
// e.g. "--model: unknown model 'llama3-7b' (did you mean 'llama3-8b'?); expected one of ...".
std::string preset_path(const std::string& kind, const std::string& name);
// The same, naming the key that gave the name and the other way to give one in messages:
// "'model': unknown model ... (or model_file: a path)" for a file that names a preset.
std::string preset_path(const std::string& kind, const std::string& name, const std::string& option,
                        const std::string& file_hint);

}  // namespace plumb::plan
