// The store's check records (schema 7): plumb check node --store, plumb check burn-in.
#include "baseline/store.h"

#include <fmt/format.h>

#include "baseline/store_retry.h"
#include "common/json.h"

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

}  // namespace

int64_t Store::save_check(const CheckEntry& entry) {
  const std::string failing = nlohmann::json(entry.failing).dump();
  const std::string record =
      entry.record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return with_retries([&] {  // one transaction, run again whole when the server went away
    WriteTransaction t(*db_);
    Query insert = db_->prepare(fmt::format(
        "INSERT INTO check_records (created, host, kind, status, failing, record) VALUES "
        "(?,?,?,?,?,?){}", db_->sql().returning_id));
    insert.bind(1, entry.created).bind(2, entry.host).bind(3, entry.kind).bind(4, entry.status);
    insert.bind(5, failing).bind(6, record);
    insert.step();
    const int64_t id = insert.inserted_id();
    t.commit();
    return id;
  });
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
  while (q.step()) {
    CheckEntry e;
    e.id = q.column_int(0);
    e.created = q.column_text(1);
    e.host = q.column_text(2);
    e.kind = q.column_text(3);
    e.status = q.column_text(4);
    e.failing = names_of(q.column_text(5));
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace plumb::baseline
