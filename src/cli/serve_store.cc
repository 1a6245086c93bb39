#include "cli/serve_store.h"

#include "baseline/store.h"
#include "common/environment.h"
#include <fmt/format.h>

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

int64_t store_serve_result(const nlohmann::json& doc, const std::string& url,
                           const ServeReportOptions& o, const std::string& source,
                           std::ostream& note) {
  const std::string path = o.db.empty() ? baseline::default_store_path() : o.db;
  baseline::Store store(path);
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
