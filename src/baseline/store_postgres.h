// The PostgreSQL store, through libpq opened with dlopen (a plumb using only SQLite stores runs
// on a machine without libpq5). docs/store.md.
#pragma once

#include <memory>
#include <string>

#include "baseline/store_sql.h"

namespace plumb::baseline {

// Connects to the store at `url` (postgresql://... or postgres://...; libpq reads the password
// from the URL, PGPASSWORD, PGPASSFILE or ~/.pgpass, and PGSERVICE, PGSSLMODE... as it always
// does). kReading sets every transaction read-only. Errors (exit 2) name the URL with its
// password masked, on one line.
std::unique_ptr<Connection> open_postgres(const std::string& url, OpenFor mode);

}  // namespace plumb::baseline
