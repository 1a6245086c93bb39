// The store's check records (schema 7): plumb check node --store, plumb check burn-in.
#include "baseline/store.h"

#include <fmt/format.h>

#include "baseline/store_retry.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace plumb::baseline {
namespace {

// The first schema with check records.
constexpr int kCheckRecordsSchema = 7;

std::vector<std::string> names_of(const std::string& text) {
  std::string problem;
  const nlohmann::json j = parse_json_or_discarded(text, problem);
  std::vector<std::string> names;
  if (!j.is_array()) return names;
  for (const nlohmann::json& n : j) {
    if (n.is_string()) names.push_back(n.get<std::string>());
  }
  return names;
}

// A pass from a query whose first columns are id, created, host, kind, status, failing.
CheckEntry check_entry_of(const Query& q) {
  CheckEntry e;
  e.id = q.column_int(0);
  e.created = q.column_text(1);
  e.host = q.column_text(2);
  e.kind = q.column_text(3);
  e.status = q.column_text(4);
  e.failing = names_of(q.column_text(5));
  return e;
}

}  // namespace

// One transaction, run again whole when the server went away; a pass whose write key is stored
// already (an earlier try committed, or a copy) is not stored again.
int64_t Store::save_check(const CheckEntry& entry, RecordId id) {
  const std::string failing =
      nlohmann::json(entry.failing).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string record = entry.record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Text as both backends hold it (strings.h valid_utf8_text).
  const std::string created = valid_utf8_text(entry.created);
  const std::string host = valid_utf8_text(entry.host);
  const std::string kind = valid_utf8_text(entry.kind);
  const std::string status = valid_utf8_text(entry.status);
  const std::string key = write_key_or_new(entry.write_key);
  return with_retries([&] {
    WriteTransaction t(*db_);
    Query find = db_->prepare("SELECT id FROM check_records WHERE write_key = ?");
    find.bind(1, key);
    if (find.step()) return find.column_int(0);  // rolled back: nothing was written
    const bool kept = id == RecordId::kKept;
    Query insert = db_->prepare(fmt::format(
        "INSERT INTO check_records (created, host, kind, status, failing, record, write_key{}) "
        "VALUES (?,?,?,?,?,?,?{}){}",
        kept ? ", id" : "", kept ? ",?" : "", db_->sql().returning_id));
    insert.bind(1, created).bind(2, host).bind(3, kind).bind(4, status);
    insert.bind(5, failing).bind(6, record).bind(7, key);
    if (kept) insert.bind(8, entry.id);
    insert.step();
    const int64_t saved = kept ? entry.id : insert.inserted_id();
    if (kept && !db_->sql().sync_ids.empty()) {
      db_->exec(fmt::format(fmt::runtime(db_->sql().sync_ids), "check_records"));
    }
    t.commit();
    return saved;
  });
}

std::vector<int64_t> Store::check_ids() {
  std::vector<int64_t> ids;
  if (version_ < kCheckRecordsSchema) return ids;
  Query q = db_->prepare("SELECT id FROM check_records ORDER BY id");
  while (q.step()) ids.push_back(q.column_int(0));
  return ids;
}

std::optional<int64_t> Store::check_with_key(const std::string& write_key) {
  if (version_ < kWriteKeySchema) return std::nullopt;
  Query q = db_->prepare("SELECT id FROM check_records WHERE write_key = ?");
  q.bind(1, write_key);
  return q.step() ? std::optional<int64_t>(q.column_int(0)) : std::nullopt;
}

// A pass whose record or failing list is not JSON is refused, naming it (plumb store check).
CheckEntry Store::load_check(int64_t id) {
  const std::string where = fmt::format("{}: check pass {}", db_->name(), id);
  if (version_ < kCheckRecordsSchema) throw Error(fmt::format("{}: no such pass", where));
  Query q = db_->prepare(fmt::format(
      "SELECT id, created, host, kind, status, failing, record, {} FROM check_records WHERE id = ?",
      version_ >= kWriteKeySchema ? "write_key" : "NULL"));
  q.bind(1, id);
  if (!q.step()) throw Error(fmt::format("{}: no such pass", where));
  CheckEntry e = check_entry_of(q);
  std::string problem;
  const nlohmann::json failing = parse_json_or_discarded(q.column_text(5), problem);
  if (!failing.is_array()) {
    throw Error(fmt::format("{}: failing: expected a JSON array of check names{}{}", where,
                            problem.empty() ? "" : ": ", problem));
  }
  e.record = parse_json_or_discarded(q.column_text(6), problem);
  if (e.record.is_discarded()) throw Error(fmt::format("{}: record: {}", where, problem));
  e.write_key = q.column_is_null(7) ? std::string() : q.column_text(7);
  return e;
}

std::vector<CheckEntry> Store::recent_checks(int per_host, const std::string& host,
                                             const std::string& kind) {
  if (version_ < kCheckRecordsSchema) return {};  // an older store read without migrating
  Query q = db_->prepare(
      "SELECT id, created, host, kind, status, failing FROM ("
      " SELECT *, ROW_NUMBER() OVER (PARTITION BY host ORDER BY id DESC) AS n"
      " FROM check_records WHERE (? = '' OR host = ?) AND (? = '' OR kind = ?))"
      " AS c WHERE n <= ? ORDER BY id DESC");
  q.bind(1, host).bind(2, host).bind(3, kind).bind(4, kind);
  const int index = 5;
  q.bind(index, static_cast<int64_t>(per_host));
  std::vector<CheckEntry> entries;
  while (q.step()) entries.push_back(check_entry_of(q));
  return entries;
}

}  // namespace plumb::baseline
