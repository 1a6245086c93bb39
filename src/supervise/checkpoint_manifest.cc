#include "supervise/checkpoint_manifest.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json.h"
#include "common/sha256.h"
#include "common/strings.h"
#include "supervise/checkpoint.h"

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A manifest lists one line per file (~150 bytes): a million files fit well under this.
constexpr uint64_t kManifestLimitBytes = uint64_t{1} << 30;
constexpr size_t kReadChunkBytes = size_t{1} << 20;
constexpr size_t kSha256HexDigits = 2 * Sha256::kDigestBytes;

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads `fd` to its end in chunks handed to `take`; "" or the reason it failed.
template <typename Take>
std::string read_chunks(int fd, Take take) {
  std::vector<char> buffer(kReadChunkBytes);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) return "";
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fmt::format("cannot read: {}", std::strerror(errno));
    if (!take(std::string_view(buffer.data(), static_cast<size_t>(n)))) return "too large";
  }
}

// What says a file changed: its size, modification time and identity (a file renamed over the
// path is another inode).
struct FileStamp {
  uint64_t size = 0;
  timespec mtime{};
  dev_t device = 0;
  ino_t inode = 0;

  explicit FileStamp(const struct stat& st)
      : size(static_cast<uint64_t>(st.st_size)), mtime(st.st_mtim), device(st.st_dev), inode(st.st_ino) {}
  bool same_contents_as(const FileStamp& o) const {
    return size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

// "7 bytes, modified 2024-01-01 00:00:00.000000000 UTC".
std::string stamp_text(const FileStamp& s) {
  std::tm utc{};
  gmtime_r(&s.mtime.tv_sec, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &utc);
  return fmt::format("{} bytes, modified {}.{:09d} UTC", s.size, when, s.mtime.tv_nsec);
}

// "" when the file hashed (`hashed` bytes, stamped `before` when opened) is still what the path
// names; else how it changed meanwhile: a job still writing it, or a save that replaced it.
std::string change_problem(const fs::path& path, const FileStamp& before, uint64_t hashed) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fmt::format("was removed while it was hashed ({})", std::strerror(errno));
  }
  const FileStamp after(st);
  if (after.device != before.device || after.inode != before.inode) {
    return fmt::format("was replaced by another file while it was hashed: {} when opened; the new one {}",
                       stamp_text(before), stamp_text(after));
  }
  if (!after.same_contents_as(before) || hashed != before.size) {
    return fmt::format("changed while it was hashed: {} when opened; {} once {} bytes were read", stamp_text(before),
                       stamp_text(after), hashed);
  }
  return "";
}

// "" with the file's size and hex digest in `file`, or the reason it could not be read or why the
// digest cannot be trusted (the file changed while it was read).
std::string hash_file(const fs::path& path, ManifestFile& file, const AfterHash& after_hash = {}) {
  const Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) return fmt::format("cannot read: {}", std::strerror(errno));
  const FileStamp before(st);
  Sha256 hash;
  file.size = 0;
  std::string problem = read_chunks(fd.fd, [&](std::string_view bytes) {
    hash.update(bytes);
    file.size += bytes.size();
    return true;
  });
  if (!problem.empty()) return problem;
  if (after_hash) after_hash(path);
  problem = change_problem(path, before, file.size);
  if (problem.empty()) file.sha256 = to_hex(hash.finish());
  return problem;
}

bool is_hex_digest(const std::string& text) {
  return text.size() == kSha256HexDigits &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A relative path that stays inside the manifest's folder.
bool is_inside(const std::string& text) {
  const fs::path path(text);
  if (text.empty() || path.is_absolute()) return false;
  return std::none_of(path.begin(), path.end(), [](const fs::path& part) { return part == ".."; });
}

// Checks one entry of "files"; problems are appended naming "files[i].field".
std::optional<ManifestFile> read_entry(const json& entry, size_t i,
                                       std::vector<std::string>& problems) {
  const std::string where = fmt::format("files[{}]", i);
  if (!entry.is_object()) {
    problems.push_back(where + ": expected an object with path, size and sha256");
    return std::nullopt;
  }
  const size_t before = problems.size();
  ManifestFile file;
  const auto path = entry.find("path");
  if (path == entry.end() || !path->is_string() || !is_inside(path->get<std::string>())) {
    problems.push_back(where + ".path: expected a relative path inside the checkpoint");
  } else {
    file.path = path->get<std::string>();
  }
  const auto size = entry.find("size");
  if (size == entry.end() || !size->is_number_unsigned()) {
    problems.push_back(where + ".size: expected a byte count");
  } else {
    file.size = size->get<uint64_t>();
  }
  const auto sha = entry.find("sha256");
  if (sha == entry.end() || !sha->is_string() || !is_hex_digest(sha->get<std::string>())) {
    problems.push_back(where + ".sha256: expected 64 lowercase hex digits");
  } else {
    file.sha256 = sha->get<std::string>();
  }
  if (problems.size() != before) return std::nullopt;
  return file;
}

// Every problem of a parsed document, in one pass.
std::vector<std::string> read_document(const json& doc, Manifest& manifest) {
  if (!doc.is_object()) return {"expected a JSON object"};
  std::vector<std::string> problems;
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || schema->get<std::string>() != kManifestSchema) {
    problems.push_back(fmt::format("schema: expected \"{}\"", kManifestSchema));
  }
  const auto step = doc.find("step");
  if (step == doc.end() || !step->is_number_unsigned() ||
      step->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    problems.push_back("step: expected a whole number, 0 or more");
  } else {
    manifest.step = step->get<int64_t>();
  }
  const auto files = doc.find("files");
  if (files == doc.end() || !files->is_array()) {
    problems.push_back("files: expected a list");
    return problems;
  }
  if (files->empty()) {
    problems.push_back("files: expected at least one file (a checkpoint without files is not complete)");
  }
  for (size_t i = 0; i < files->size(); ++i) {
    if (auto file = read_entry((*files)[i], i, problems)) manifest.files.push_back(*file);
  }
  return problems;
}

}  // namespace

TextRead read_text(const fs::path& path, uint64_t limit) {
  TextRead read;
  const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    read.problem = fmt::format("cannot read: {}", std::strerror(errno));
    return read;
  }
  read.problem = read_chunks(file.fd, [&](std::string_view bytes) {
    read.text.append(bytes);
    return read.text.size() <= limit;
  });
  if (read.problem == "too large") read.problem = fmt::format("is larger than {} bytes", limit);
  return read;
}

ManifestRead read_manifest(const fs::path& folder, const std::string& prefix) {
  const std::string name = prefix + kManifestName;
  ManifestRead result;
  const TextRead text = read_text(folder / kManifestName, kManifestLimitBytes);
  if (!text.problem.empty()) {
    result.problem = fmt::format("{}: {}", name, text.problem);
    return result;
  }
  std::string why;
  const json doc = parse_json_or_discarded(text.text, why);
  if (doc.is_discarded()) {
    result.problem = fmt::format("{}: {}", name, why);
    return result;
  }
  Manifest manifest;
  const std::vector<std::string> problems = read_document(doc, manifest);
  if (!problems.empty()) {
    result.problem = fmt::format("{}: {}", name, join(problems, "; "));
    return result;
  }
  result.manifest = std::move(manifest);
  return result;
}

std::string verify_manifest(const fs::path& folder, const std::string& prefix,
                            const Manifest& manifest) {
  const std::string manifest_name = prefix + kManifestName;
  std::vector<std::string> problems;
  for (const ManifestFile& file : manifest.files) {
    std::error_code ec;
    const fs::file_status status = fs::status(folder / file.path, ec);
    const std::string name = prefix + file.path;
    if (status.type() == fs::file_type::not_found) {
      problems.push_back(fmt::format("{} is missing (listed in {})", name, manifest_name));
    } else if (ec) {
      problems.push_back(fmt::format("{}: cannot read: {}", name, ec.message()));
    } else if (!fs::is_regular_file(status)) {
      problems.push_back(fmt::format("{}: not a regular file", name));
    } else if (const uint64_t size = fs::file_size(folder / file.path, ec); size != file.size) {
      problems.push_back(
          fmt::format("{}: {} bytes, {} says {}", name, size, manifest_name, file.size));
    }
  }
  if (!problems.empty()) return join(problems, "; ");
  for (const ManifestFile& file : manifest.files) {
    ManifestFile found;
    const std::string problem = hash_file(folder / file.path, found);
    const std::string name = prefix + file.path;
    if (!problem.empty()) {
      problems.push_back(fmt::format("{}: {}", name, problem));
    } else if (found.sha256 != file.sha256) {
      problems.push_back(fmt::format("{}: SHA-256 differs from {}", name, manifest_name));
    }
  }
  return join(problems, "; ");
}

Manifest make_manifest(const fs::path& folder, int64_t step, const AfterHash& after_hash) {
  Manifest manifest;
  manifest.step = step;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path relative = it->path().lexically_relative(folder);
    if (relative == kManifestName || !it->is_regular_file(ec)) continue;
    ManifestFile file;
    file.path = relative.generic_string();
    const std::string problem = hash_file(it->path(), file, after_hash);
    if (!problem.empty()) throw Error(fmt::format("{}: {}", it->path().string(), problem));
    if (terminal_safe(file.path) != file.path) {  // bytes that are not UTF-8, control characters
      throw Error(fmt::format("{}: the name is not plain UTF-8 text; a manifest cannot list it",
                              terminal_safe(it->path().string())));
    }
    manifest.files.push_back(std::move(file));
  }
  if (ec) throw Error(fmt::format("{}: cannot read: {}", folder.string(), ec.message()));
  std::sort(manifest.files.begin(), manifest.files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  return manifest;
}

std::string manifest_json(const Manifest& manifest) {
  std::string text = fmt::format("{{\n  \"schema\": \"{}\",\n  \"step\": {},\n  \"files\": [",
                                 kManifestSchema, manifest.step);
  for (size_t i = 0; i < manifest.files.size(); ++i) {
    const ManifestFile& file = manifest.files[i];
    text += fmt::format("{}\n    {{\"path\": {}, \"size\": {}, \"sha256\": \"{}\"}}",
                        i == 0 ? "" : ",", json(file.path).dump(), file.size, file.sha256);
  }
  text += manifest.files.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

}  // namespace plumb::supervise
