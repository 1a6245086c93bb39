#include "cli/import_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "baseline/importers/importer.h"
#include "baseline/store.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/input_file.h"

namespace plumb::cli {

void setup_import(CLI::App& app, ImportCommandOptions& o) {
  app.add_option("file", o.file, "The log to import")->required();
  app.add_option("--format", o.format,
                 "nccl-tests, nccl-json, hccl-test or osu (detected when not given)");
  app.add_option("--collective", o.collective,
                 "The collective, for logs that do not name it (nccl-tests before 2.13)");
  app.add_option("--ranks", o.ranks, "The rank count, for logs that do not list their ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--label", o.label, "A label for the records");
  app.add_option("--db", o.db, "The store (default $XDG_DATA_HOME/plumb/plumb.db)");
}

namespace {

baseline::Record imported_record(const baseline::ImportedTest& t, std::string_view format,
                                 const ImportCommandOptions& o) {
  baseline::Record r;
  r.created = utc_timestamp();
  r.label = o.label;
  r.hosts = t.hosts;
  r.source = fmt::format("{}:{} ({})", o.file, t.line, t.tool);
  r.comm = {{"schema", comm::kCommSchema},
            {"backend", format},
            {"ranks", t.ranks},
            {"hosts", t.hosts},
            {"imported", {{"file", o.file}, {"line", t.line}, {"tool", t.tool},
                          {"command", t.command}}}};
  r.rows = t.rows;
  return r;
}

}  // namespace

int run_import(const ImportCommandOptions& o) {
  const std::string text = read_whole_file(o.file, "a log file");

  baseline::ImportOptions options;
  if (!o.collective.empty()) options.collective = baseline::known_collective(o.collective, "--collective");
  options.ranks = o.ranks;
  const baseline::Importer& importer =
      o.format.empty() ? baseline::detect_importer(text, o.file) : baseline::find_importer(o.format);
  // One transaction for the file: all its tests are stored, or none. Each test is stored as
  // soon as it is parsed, so memory holds one test whatever the file's size.
  baseline::Store store(o.db.empty() ? baseline::default_store_path() : o.db);
  baseline::Store::Batch batch(store);
  std::vector<int64_t> ids;
  std::vector<std::string> stored;
  importer.parse_each(text, o.file, options, [&](baseline::ImportedTest&& t) {
    ids.push_back(batch.add(imported_record(t, importer.name(), o)));
    stored.push_back(fmt::format("{} ({} rows, {} ranks) from {}:{} as baseline {}",
                                 t.rows.empty() ? "?" : t.rows.front().collective, t.rows.size(),
                                 t.ranks, o.file, t.line, ids.back()));
  });
  batch.commit();
  // Only now do the ids exist: a failed commit (a full disk) printed none of them.
  for (const int64_t id : ids) std::cout << id << "\n";
  for (const std::string& line : stored) fmt::print(std::cerr, "plumb: imported {}\n", line);
  return 0;
}

}  // namespace plumb::cli
