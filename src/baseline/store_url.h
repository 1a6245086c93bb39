// Which store --db (or PLUMB_DB) names, and how its URL is shown. A postgresql:// or postgres://
// URL is a PostgreSQL store (libpq's connection URI: user, password, host, port, dbname and
// ?key=value parameters such as sslmode); anything else is the path of an SQLite file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::baseline {

bool is_postgres_url(std::string_view location);

// The URL with its password masked wherever libpq reads one: the userinfo's (`user:***@`) and a
// `password=` parameter's value. Host, port, database and the other parameters are kept: they
// say which store, and hold no secret.
std::string redact_store_url(std::string_view url);

// The passwords `url` carries, as written and percent-decoded: what a message from libpq is
// masked against (url_redact.h mask_secrets).
std::vector<std::string> store_url_secrets(std::string_view url);

// `text` (a libpq message) on one line, every secret of `url` masked.
std::string mask_store_message(std::string_view text, std::string_view url);

}  // namespace plumb::baseline
