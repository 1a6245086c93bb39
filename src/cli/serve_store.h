// plumb serve bench|peak --store: the result kept as a serving record (store schema 8, a
// plumb.serve/1 document), listed, shown, exported, reported and diffed as one (docs/serve.md,
// "Stored and compared").
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "baseline/store.h"
#include "cli/serve_options.h"
#include "serve/result.h"

#include <nlohmann/json.hpp>

namespace plumb::cli {

// Saves `doc` (plumb.serve/1: report::serve_json, or plumb serve peak's with its search) in the
// store named by --db (else the default store) with --label, `source` ("plumb serve bench") and
// the host of `url` as its host; prints "<source>: stored as baseline N in PATH" on `note`;
// returns the new record's id.
int64_t store_serve_result(const nlohmann::json& doc, const std::string& url,
                           const ServeReportOptions& options, const std::string& source,
                           std::ostream& note);
// The same into a store opened before the run (open_serve_store).
int64_t store_serve_result(baseline::Store& store, const nlohmann::json& doc, const std::string& url,
                           const ServeReportOptions& options, const std::string& source,
                           std::ostream& note);

// With --store, the store opened before the first request, so that one that cannot be written
// fails in a second and loses no run: "--store: cannot create the store's folder
// /nonexistent/.local/share/plumb (Permission denied); give --db FILE in a folder you can
// write"; null without --store.
std::unique_ptr<baseline::Store> open_serve_store(const ServeReportOptions& options);

// The host part of a URL ("http://user:pw@node7:8000/v1" -> "node7"); the URL itself when it has
// none.
std::string url_host(const std::string& url);

}  // namespace plumb::cli
