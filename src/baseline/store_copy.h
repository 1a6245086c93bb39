// plumb store copy FROM TO: every record of one store into another (SQLite into PostgreSQL and
// back), idempotent by the records' write keys (docs/store.md, "Copying a store").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace plumb::baseline {

// A record whose id in the copy differs from its id in the source.
struct IdMove {
  int64_t from = 0;
  int64_t to = 0;
};

// What a copy did, for plumb store copy's report.
struct CopyResult {
  std::string from;                 // the stores' names (Store::path(): passwords masked)
  std::string to;
  int64_t copied = 0;               // baselines stored in `to`
  int64_t already = 0;              // baselines whose write key `to` held already
  int64_t checks_copied = 0;        // check passes likewise
  int64_t checks_already = 0;
  std::vector<IdMove> moved;        // baselines whose id differs, in the source's id order
  std::vector<IdMove> moved_checks; // check passes likewise
};

// Called after each record (baseline or check pass): how many of how many are done.
using CopyProgress = std::function<void(size_t done, size_t total)>;

// Copies every baseline (every kind) in id order, then every check pass, from the store at `from`
// (opened read-only) into the one at `to` (opened read-write: created when missing), each record
// in one transaction, keeping its created time, label, hosts, source and write key. A record
// whose write key `to` holds already is skipped. Into a store with no baselines (no check passes)
// the source's ids are kept; else `to` gives new ids. A source older than schema 9 has no write
// keys: each record's key is derived from its id, time, label, source and hosts, so that copying
// it twice still stores it once. Error (exit 2) when both name the same store.
CopyResult copy_store(const std::string& from, const std::string& to,
                      const CopyProgress& progress = {});

}  // namespace plumb::baseline
