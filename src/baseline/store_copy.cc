#include "baseline/store_copy.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "baseline/store.h"
#include "baseline/store_url.h"
#include "common/error.h"
#include "common/sha256.h"

namespace plumb::baseline {
namespace {

// Write keys are 32 hex digits (store.h new_write_key); a derived one is as long.
constexpr size_t kWriteKeyDigits = 32;

// The same store named twice: the same URL, or the same file by another path.
bool same_store(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (is_postgres_url(a) || is_postgres_url(b)) return false;
  std::error_code ec;
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec) &&
         !ec;
}

// The key of a record of a store older than schema 9, which has none: the same every time the
// store is copied, and different for every record of it.
std::string derived_key(const std::string& kind, int64_t id, const std::string& created,
                        const std::string& what) {
  return sha256_hex(fmt::format("{}\n{}\n{}\n{}", kind, id, created, what))
      .substr(0, kWriteKeyDigits);
}

std::string key_of(const Record& r) {
  if (!r.write_key.empty()) return r.write_key;
  return derived_key("baseline", r.id, r.created,
                     fmt::format("{}\n{}\n{}", r.label, r.source, nlohmann::json(r.hosts).dump()));
}

std::string key_of(const CheckEntry& e) {
  if (!e.write_key.empty()) return e.write_key;
  return derived_key("check", e.id, e.created, fmt::format("{}\n{}\n{}", e.host, e.kind, e.status));
}

// Copies each record of `ids` (load, then save unless its key is there); counts into the result.
template <class Load, class Find, class Save>
void copy_each(const std::vector<int64_t>& ids, Load load, Find find, Save save, int64_t& copied,
               int64_t& already, std::vector<IdMove>& moved, const std::function<void()>& done) {
  for (const int64_t id : ids) {
    auto record = load(id);
    record.write_key = key_of(record);
    int64_t there = 0;
    if (const auto found = find(record.write_key)) {
      there = *found;
      ++already;
    } else {
      there = save(record);
      ++copied;
    }
    if (there != id) moved.push_back({id, there});
    done();
  }
}

}  // namespace

CopyResult copy_store(const std::string& from_location, const std::string& to_location,
                      const CopyProgress& progress) {
  if (same_store(from_location, to_location)) {
    // A file path has no password: redact_store_url gives it back as it is.
    throw Error(fmt::format("{}: plumb store copy needs two stores, and FROM and TO name the same "
                            "one", redact_store_url(from_location)));
  }
  Store from(from_location, StoreMode::kReadOnly);
  Store to(to_location, StoreMode::kReadWrite);
  CopyResult result;
  result.from = from.path();
  result.to = to.path();
  const std::vector<int64_t> ids = from.ids();
  const std::vector<int64_t> check_ids = from.check_ids();
  const RecordId keep = to.ids().empty() ? RecordId::kKept : RecordId::kNew;
  const RecordId keep_checks = to.check_ids().empty() ? RecordId::kKept : RecordId::kNew;
  const size_t total = ids.size() + check_ids.size();
  size_t done = 0;
  const std::function<void()> tick = [&] {
    if (progress) progress(++done, total);
  };
  copy_each(
      ids, [&](int64_t id) { return from.load(id); },
      [&](const std::string& key) { return to.baseline_with_key(key); },
      [&](const Record& r) { return to.save(r, keep); }, result.copied, result.already,
      result.moved, tick);
  copy_each(
      check_ids, [&](int64_t id) { return from.load_check(id); },
      [&](const std::string& key) { return to.check_with_key(key); },
      [&](const CheckEntry& e) { return to.save_check(e, keep_checks); }, result.checks_copied,
      result.checks_already, result.moved_checks, tick);
  return result;
}

}  // namespace plumb::baseline
