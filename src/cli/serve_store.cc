#include "cli/serve_store.h"

#include "baseline/store.h"
#include "common/environment.h"
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace fs = std::filesystem;

namespace plumb::cli {

std::string url_host(const std::string& url) {
  const size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (const size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8000
    const size_t close = authority.find(']');
    return close == std::string::npos ? authority : authority.substr(1, close - 1);
  }
  if (const size_t colon = authority.find(':'); colon != std::string::npos) authority.resize(colon);
  return authority.empty() ? url : authority;
}

namespace {

std::string store_path(const ServeReportOptions& o) {
  return baseline::store_location(o.db);
}

// SQLite says only "unable to open database file" for a folder that is missing or not writable;
// this says which folder and why.
void check_store_folder(const std::string& path) {
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    throw Error(fmt::format("--store: cannot create the store's folder {} ({}); give --db FILE in a "
                            "folder you can write",
                            folder.string(), ec.message()));
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw Error(fmt::format("--store: the store's folder {} is not writable ({}); give --db FILE in "
                            "a folder you can write",
                            folder.string(), std::strerror(errno)));
  }
}

}  // namespace

std::unique_ptr<baseline::Store> open_serve_store(const ServeReportOptions& o) {
  if (!o.store) return nullptr;
  const std::string path = store_path(o);
  check_store_folder(path);
  return std::make_unique<baseline::Store>(path);
}

int64_t store_serve_result(const nlohmann::json& doc, const std::string& url,
                           const ServeReportOptions& o, const std::string& source,
                           std::ostream& note) {
  baseline::Store store(store_path(o));
  return store_serve_result(store, doc, url, o, source, note);
}

int64_t store_serve_result(baseline::Store& store, const nlohmann::json& doc, const std::string& url,
                           const ServeReportOptions& o, const std::string& source,
                           std::ostream& note) {
  const std::string path = store_path(o);
  baseline::Record r;
  r.created = utc_timestamp();
  r.label = o.label;
  r.source = source;
  r.hosts = {url_host(url)};
  r.serve = doc;
  const int64_t id = store.save(r);
  note << fmt::format("{}: stored as baseline {} in {}\n", source, id, path);
  return id;
}

}  // namespace plumb::cli
