#include "common/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace plumb {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string this_binary() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.string();
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace

std::string resolve_data_dir(const DataDirSources& sources,
                             const std::function<bool(const std::string&)>& is_dir) {
  if (!sources.env.empty()) return sources.env;
  if (!sources.legacy_env.empty()) return sources.legacy_env;
  if (!sources.exe.empty()) {
    const std::filesystem::path share =
        std::filesystem::path(sources.exe).parent_path().parent_path() / "share" / "plumb";
    if (is_dir(share.string())) return share.string();
  }
  return sources.built_in;
}

const std::string& data_dir() {
  static const std::string dir = resolve_data_dir(
      {env_or_empty("PLUMB_DATA_DIR"), env_or_empty("PLUMB_DATA"), this_binary(), PLUMB_DATA_DIR},
      is_directory);
  return dir;
}

}  // namespace plumb
