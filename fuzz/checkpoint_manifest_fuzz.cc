// libFuzzer target: any bytes as plumb-checkpoint.json. read_manifest must return a manifest or
// the problems, never crash or throw; a manifest it accepts must come back unchanged when
// written by manifest_json and read again, and verifying it against a folder must not crash.
// The reader reads a file: the bytes go to one in a temporary folder of this process's own.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/strings.h"
#include "supervise/checkpoint.h"
#include "supervise/checkpoint_manifest.h"

namespace {

namespace fs = std::filesystem;
using plumb::supervise::Manifest;

// Removed at exit.
struct Folder {
  fs::path path;
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "plumb-fuzz-manifest-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path = pattern;
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void put(const fs::path& folder, std::string_view bytes) {
  std::ofstream out(folder / plumb::supervise::kManifestName, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
}

bool same(const Manifest& a, const Manifest& b) {
  if (a.step != b.step || a.files.size() != b.files.size()) return false;
  for (size_t i = 0; i < a.files.size(); ++i) {
    const auto& x = a.files[i];
    const auto& y = b.files[i];
    if (x.path != y.path || x.size != y.size || x.sha256 != y.sha256) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Folder folder;
  put(folder.path, std::string_view(reinterpret_cast<const char*>(data), size));
  const auto read = plumb::supervise::read_manifest(folder.path, "");
  if (read.manifest.has_value() == !read.problem.empty()) std::abort();
  if (!read.manifest) return 0;
  (void)plumb::supervise::verify_manifest(folder.path, "", *read.manifest);
  put(folder.path, plumb::supervise::manifest_json(*read.manifest));
  const auto again = plumb::supervise::read_manifest(folder.path, "");
  if (!again.manifest || !same(*again.manifest, *read.manifest)) std::abort();
  return 0;
}
