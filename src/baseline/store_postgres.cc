#include "baseline/store_postgres.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "baseline/store_retry.h"
#include "baseline/store_url.h"
#include "common/error.h"
#include "common/shared_library.h"

namespace plumb::baseline {
namespace {

// PostgreSQL's type oids (src/include/catalog/pg_type.dat): parameters are sent typed, so that
// `$1 = ''` and `LIMIT $1` need no cast in the SQL the two dialects share.
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;

// How long libpq tries to reach the server before giving up, when neither the URL
// (connect_timeout=) nor PGCONNECT_TIMEOUT says: a `plumb check` on every node must end.
constexpr const char* kConnectTimeoutSeconds = "10";

struct PqApi {
  decltype(&PQconnectdbParams) connectdb_params = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQexec) exec = nullptr;
  decltype(&PQexecParams) exec_params = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&PQreset) reset = nullptr;
  decltype(&PQresultErrorField) result_error_field = nullptr;
};

struct Loaded {
  SharedLibrary library;
  PqApi api;

  Loaded()
      : library(std::array<std::string, 1>{"libpq.so.5"},
                "a postgresql:// store is reached through libpq: apt install libpq5") {
    api.connectdb_params = library.function<decltype(api.connectdb_params)>("PQconnectdbParams");
    api.status = library.function<decltype(api.status)>("PQstatus");
    api.error_message = library.function<decltype(api.error_message)>("PQerrorMessage");
    api.finish = library.function<decltype(api.finish)>("PQfinish");
    api.exec = library.function<decltype(api.exec)>("PQexec");
    api.exec_params = library.function<decltype(api.exec_params)>("PQexecParams");
    api.result_status = library.function<decltype(api.result_status)>("PQresultStatus");
    api.result_error_message =
        library.function<decltype(api.result_error_message)>("PQresultErrorMessage");
    api.clear = library.function<decltype(api.clear)>("PQclear");
    api.ntuples = library.function<decltype(api.ntuples)>("PQntuples");
    api.getvalue = library.function<decltype(api.getvalue)>("PQgetvalue");
    api.getisnull = library.function<decltype(api.getisnull)>("PQgetisnull");
    api.set_notice_processor =
        library.function<decltype(api.set_notice_processor)>("PQsetNoticeProcessor");
    api.reset = library.function<decltype(api.reset)>("PQreset");
    api.result_error_field = library.function<decltype(api.result_error_field)>("PQresultErrorField");
  }
};

const PqApi& pq(const std::string& shown) {
  try {
    static const Loaded loaded;  // a failed load throws, and the next call tries again
    return loaded.api;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", shown, e.what()));
  }
}

// The SQLSTATEs after which the same transaction may succeed when run again (PostgreSQL
// Appendix A, "Error Codes"): serialization_failure, deadlock_detected, and the server going away
// or not yet back: admin_shutdown, crash_shutdown, cannot_connect_now; and unique_violation: two
// writers of one write key at once, the second of which finds the first's record when run again
// (docs/store.md, "Write keys"). Class 08 (connection exceptions) and a connection gone bad are
// retried too.
constexpr std::string_view kRetryableStates[] = {"40001", "40P01", "57P01", "57P02", "57P03",
                                                 "23505"};

bool retryable(std::string_view state) {
  if (state.substr(0, 2) == "08") return true;
  for (const std::string_view s : kRetryableStates) {
    if (state == s) return true;
  }
  return false;
}

// '?' parameters become $1, $2, ... outside quoted text.
std::string numbered_parameters(std::string_view sql) {
  std::string out;
  int n = 0;
  char quote = 0;
  for (const char c : sql) {
    if (quote != 0) {
      quote = c == quote ? 0 : quote;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      out += fmt::format("${}", ++n);
      continue;
    }
    out += c;
  }
  return out;
}

using Result = std::unique_ptr<PGresult, void (*)(PGresult*)>;

class PgConnection;

class PgQuery final : public QueryBackend {
 public:
  PgQuery(PgConnection& db, std::string_view sql);
  void bind(int index, int64_t value) override { set(index, std::to_string(value), kInt8Oid); }
  // NaN goes in as NULL and comes back NaN, as SQLite stores it.
  void bind(int index, double value) override {
    if (std::isnan(value)) return bind_null(index);
    set(index, std::isinf(value) ? (value > 0 ? "Infinity" : "-Infinity") : fmt::format("{}", value),
        kFloat8Oid);
  }
  void bind(int index, std::string_view value) override { set(index, std::string(value), kTextOid); }
  void bind_null(int index) override { set(index, std::nullopt, 0); }
  bool step() override;
  void reset() override;
  int64_t column_int(int index) const override;
  double column_double(int index) const override;
  std::string column_text(int index) const override { return value(index); }
  bool column_is_null(int index) const override;
  int64_t inserted_id() const override { return column_int(0); }

 private:
  void set(int index, std::optional<std::string> value, Oid type);
  const char* value(int index) const;

  PgConnection& db_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<Oid> types_;
  Result result_{nullptr, nullptr};
  int row_ = -1;
};

class PgConnection final : public Connection {
 public:
  PgConnection(const std::string& url, OpenFor mode)
      : api_(pq(redact_store_url(url))), url_(url), name_(redact_store_url(url)), mode_(mode) {
    const char* timeout = std::getenv("PGCONNECT_TIMEOUT");
    const std::array<const char*, 4> keys = {"connect_timeout", "application_name", "dbname", nullptr};
    const std::array<const char*, 4> values = {timeout ? timeout : kConnectTimeoutSeconds, "plumb",
                                               url.c_str(), nullptr};
    conn_ = api_.connectdb_params(keys.data(), values.data(), 1);
    if (conn_ == nullptr || api_.status(conn_) != CONNECTION_OK) {
      fail("cannot connect to the store", conn_ ? api_.error_message(conn_) : "out of memory");
    }
    api_.set_notice_processor(conn_, [](void*, const char*) {}, nullptr);
    set_up();
  }
  ~PgConnection() override {
    if (conn_ != nullptr) api_.finish(conn_);
  }
  Dialect dialect() const override { return Dialect::kPostgres; }
  const std::string& name() const override { return name_; }
  void exec(std::string_view sql) override {
    reconnect_if_lost();
    const Result r(api_.exec(conn_, std::string(sql).c_str()), api_.clear);
    check(r.get(), "query failed");
  }
  Query prepare(std::string_view sql) override {
    return Query(std::make_unique<PgQuery>(*this, sql));
  }
  int schema_version() override {
    Query exists = prepare("SELECT to_regclass('plumb_schema') IS NOT NULL");
    if (!exists.step() || exists.column_int(0) == 0) return 0;
    Query q = prepare("SELECT MAX(version) FROM plumb_schema");
    return q.step() && !q.column_is_null(0) ? static_cast<int>(q.column_int(0)) : 0;
  }

  const PqApi& api() const { return api_; }
  PGconn* handle() {
    reconnect_if_lost();
    return conn_;
  }
  // Throws unless `r` succeeded: a RetryableError when running it again may succeed.
  void check(const PGresult* r, std::string_view what) {
    const ExecStatusType s = r ? api_.result_status(r) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return;
    const char* state = r ? api_.result_error_field(r, PG_DIAG_SQLSTATE) : nullptr;
    const bool lost = api_.status(conn_) != CONNECTION_OK;
    const std::string message = mask_store_message(
        r ? api_.result_error_message(r) : api_.error_message(conn_), url_);
    const std::string text = fmt::format("{}: {}: {}", name_, what, message);
    if (lost || (state != nullptr && retryable(state))) throw RetryableError(text);
    throw Error(text);
  }
  [[noreturn]] void fail(std::string_view what, std::string_view message) const {
    throw Error(fmt::format("{}: {}: {}", name_, what, mask_store_message(message, url_)));
  }

 private:
  void set_up() {
    if (mode_ == OpenFor::kReading) exec("SET default_transaction_read_only = on");
  }
  // After the server dropped the connection (a restart, a fail-over): connect again, once per
  // try; a server still away is a RetryableError (store_retry.h bounds the tries).
  void reconnect_if_lost() {
    if (api_.status(conn_) == CONNECTION_OK) return;
    api_.reset(conn_);
    if (api_.status(conn_) != CONNECTION_OK) {
      throw RetryableError(fmt::format("{}: lost the connection to the store, and cannot connect "
                                       "again: {}", name_,
                                       mask_store_message(api_.error_message(conn_), url_)));
    }
    set_up();
  }

  const PqApi& api_;
  std::string url_;
  std::string name_;
  OpenFor mode_;
  PGconn* conn_ = nullptr;
};

PgQuery::PgQuery(PgConnection& db, std::string_view sql) : db_(db), sql_(numbered_parameters(sql)) {}

void PgQuery::set(int index, std::optional<std::string> value, Oid type) {
  const auto i = static_cast<size_t>(index - 1);
  if (values_.size() <= i) {
    values_.resize(i + 1);
    types_.resize(i + 1, 0);
  }
  values_[i] = std::move(value);
  types_[i] = type;
}

bool PgQuery::step() {
  if (!result_) {
    std::vector<const char*> values;
    for (const auto& v : values_) values.push_back(v ? v->c_str() : nullptr);
    const PqApi& api = db_.api();
    result_ = Result(api.exec_params(db_.handle(), sql_.c_str(), static_cast<int>(values.size()),
                                     types_.data(), values.data(), nullptr, nullptr, 0),
                     api.clear);
    db_.check(result_.get(), "query failed");
  }
  ++row_;
  return row_ < db_.api().ntuples(result_.get());
}

void PgQuery::reset() {
  result_.reset();
  values_.clear();
  types_.clear();
  row_ = -1;
}

const char* PgQuery::value(int index) const { return db_.api().getvalue(result_.get(), row_, index); }

bool PgQuery::column_is_null(int index) const {
  return db_.api().getisnull(result_.get(), row_, index) != 0;
}

// A boolean column (`x IS NOT NULL`) reads as 1 or 0, as SQLite gives it.
int64_t PgQuery::column_int(int index) const {
  const std::string_view text = value(index);
  if (text == "t") return 1;
  if (text == "f") return 0;
  return std::strtoll(text.data(), nullptr, 10);
}

double PgQuery::column_double(int index) const { return std::strtod(value(index), nullptr); }

}  // namespace

std::unique_ptr<Connection> open_postgres(const std::string& url, OpenFor mode) {
  return std::make_unique<PgConnection>(url, mode);
}

}  // namespace plumb::baseline
