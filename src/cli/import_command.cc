#include "cli/import_command.h"
#include "cli/store_option.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>

#include "baseline/importers/importer.h"
#include "baseline/importers/log_rounds.h"
#include "baseline/store.h"
#include "baseline/validity.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/strings.h"

namespace plumb::cli {

void setup_import(CLI::App& app, ImportCommandOptions& o) {
  app.add_option("files", o.files,
                 "The log to import; several logs of the same test make one record per test, "
                 "each size the logs' median with their spread (the noise plumb diff judges by)")
      ->required();
  app.add_option("--format", o.format,
                 "nccl-tests, nccl-json, hccl-test or osu (detected when not given)");
  app.add_option("--collective", o.collective,
                 "The collective, for logs that do not name it (nccl-tests before 2.13)");
  app.add_option("--ranks", o.ranks, "The rank count, for logs that do not list their ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--label", o.label, "A label for the records");
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.footer("A log that says its results are wrong (nccl-tests' #wrong, 'Out of bounds values : "
             "N FAILED', nwrong, hccl_test's check_result failed, OSU's Validation Fail), that "
             "reports a failed check, or whose sweep ended early (no '# Avg bus bandwidth' line, a "
             "cut last row, fewer sizes than planned) is stored marked WRONG RESULTS, FAILED "
             "CHECK or INCOMPLETE, with a warning naming the line; plumb diff never passes it.");
}

namespace {

// The files a record was made of, for its source and comm.imported.
struct Origin {
  std::vector<std::string> files;
  std::string format;
};

baseline::Record imported_record(const baseline::ImportedTest& t, const Origin& origin,
                                 const ImportCommandOptions& o) {
  const std::string& file = origin.files.front();
  const size_t more = origin.files.size() - 1;
  baseline::Record r;
  r.created = utc_timestamp();
  r.label = o.label;
  r.hosts = t.hosts;
  r.source = more == 0 ? fmt::format("{}:{} ({})", file, t.line, t.tool)
                       : fmt::format("{}:{} and {} more log(s) ({})", file, t.line, more, t.tool);
  r.comm = {{"schema", comm::kCommSchema},
            {"backend", origin.format},
            {"ranks", t.ranks},
            {"hosts", t.hosts},
            {"imported", {{"file", file}, {"line", t.line}, {"tool", t.tool},
                          {"command", t.command}}}};
  if (more > 0) {
    r.comm["imported"]["files"] = origin.files;
    r.comm["settings"] = {{"rounds", origin.files.size()}};  // the logs are its rounds
  }
  r.rows = t.rows;
  r.validity = t.validity;
  return r;
}

// Each issue of a test, as it is read: "plumb: warning: run.log:45: wrong results: ...".
void warn(const baseline::ImportedTest& t) {
  for (const baseline::Issue& issue : t.validity) {
    fmt::print(std::cerr, "plumb: warning: {}\n", baseline::issue_text(issue));
  }
}

std::string imported_line(const baseline::Record& r, const baseline::ImportedTest& t,
                          const Origin& origin, int64_t id) {
  const std::vector<std::string> marks = baseline::summarize_validity(r.validity, r.rows).marks;
  const size_t more = origin.files.size() - 1;
  return fmt::format("{} ({} rows, {} ranks) from {}:{}{} as baseline {}{}",
                     t.rows.empty() ? "?" : t.rows.front().collective, t.rows.size(), t.ranks,
                     origin.files.front(), t.line,
                     more > 0 ? fmt::format(" and {} more log(s)", more) : "", id,
                     marks.empty() ? "" : ", marked " + join(marks, " · "));
}

const baseline::Importer& importer_of(const std::string& text, const std::string& file,
                                      const ImportCommandOptions& o) {
  return o.format.empty() ? baseline::detect_importer(text, file) : baseline::find_importer(o.format);
}

// The logs of one test: every file parsed, then combined, then stored.
std::vector<baseline::ImportedTest> several(const ImportCommandOptions& o,
                                            const baseline::ImportOptions& options,
                                            Origin& origin) {
  std::vector<std::vector<baseline::ImportedTest>> tests;
  for (const std::string& file : o.files) {
    const std::string text = read_whole_file(file, "a log file");
    const baseline::Importer& importer = importer_of(text, file, o);
    if (origin.format.empty()) origin.format = importer.name();
    if (importer.name() != origin.format) {
      throw Error(fmt::format("{}: a {} log, where {} is {}: several logs make one record only "
                              "of the same test",
                              file, importer.name(), o.files.front(), origin.format));
    }
    tests.push_back(importer.parse(text, file, options));
  }
  return baseline::combine_logs(o.files, std::move(tests));
}

}  // namespace

int run_import(const ImportCommandOptions& o) {
  baseline::ImportOptions options;
  if (!o.collective.empty()) options.collective = baseline::known_collective(o.collective, "--collective");
  options.ranks = o.ranks;
  Origin origin{o.files, ""};
  // One transaction for the files: all their tests are stored, or none. A single file's tests
  // are stored as soon as each is parsed, so memory holds one test whatever the file's size.
  // Every file is read (and several combined) before the store is opened: a bad one creates
  // nothing.
  std::string text;
  const baseline::Importer* importer = nullptr;
  std::vector<baseline::ImportedTest> combined;
  if (o.files.size() == 1) {
    text = read_whole_file(o.files.front(), "a log file");
    importer = &importer_of(text, o.files.front(), o);
    origin.format = importer->name();
  } else {
    combined = several(o, options, origin);
  }
  baseline::Store store(baseline::store_location(o.db));
  baseline::Store::Batch batch(store);
  std::vector<int64_t> ids;
  std::vector<std::string> stored;
  const auto store_test = [&](baseline::ImportedTest&& t) {
    warn(t);
    const baseline::Record r = imported_record(t, origin, o);
    ids.push_back(batch.add(r));
    stored.push_back(imported_line(r, t, origin, ids.back()));
  };
  if (importer != nullptr) {
    importer->parse_each(text, o.files.front(), options, store_test);
  } else {
    for (baseline::ImportedTest& t : combined) store_test(std::move(t));
  }
  batch.commit();
  // Only now do the ids exist: a failed commit (a full disk) printed none of them.
  for (const int64_t id : ids) std::cout << id << "\n";
  for (const std::string& line : stored) fmt::print(std::cerr, "plumb: imported {}\n", line);
  return 0;
}

}  // namespace plumb::cli
