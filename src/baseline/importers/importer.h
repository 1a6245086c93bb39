// Importers turn other tools' logs into baseline records: one small file per format behind one
// interface, registered in importers.cc. A malformed line is an Error with file:line, never a
// silently skipped row, and so is a row that cannot have been measured (table_helpers.h:
// row_problem, known_collective, plumb_dtype): nothing of such a file is returned. What the tool
// said about its own results — wrong elements, failed checks, a run that stopped before its end
// marker or its last size — is kept in each test's `validity`, never dropped.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/validity.h"
#include "comm/result.h"

namespace plumb::baseline {

struct ImportOptions {
  std::string collective;  // for logs that do not name it (nccl-tests before 2.13)
  int ranks = 0;           // for logs that do not list their ranks; 0 = from the log
};

// One test of a log: what one record will hold.
struct ImportedTest {
  std::string tool;                // "nccl-tests 2.17.8"
  std::string command;             // the tool's own parameter line, as printed
  std::vector<std::string> hosts;  // in rank order of first appearance
  int ranks = 0;
  int line = 0;                    // where the test starts in the file
  std::vector<comm::Row> rows;
  // What the log says about the test's own validity: wrong results, failed checks, a missing end
  // marker or a sweep cut short (baseline/validity.h); each is also a warning at import.
  Validity validity = {};
};

class Importer {
 public:
  virtual ~Importer() = default;
  virtual std::string_view name() const = 0;
  // True when `text` looks like this format (used when --format is not given).
  virtual bool detect(std::string_view text) const = 0;
  // Every test in `text`; `file` names it in errors. Throws plumb::Error "file:line: ...".
  virtual std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                          const ImportOptions& options) const = 0;
  // The same tests, each handed to `sink` as soon as it is complete, so that a large file needs
  // memory for one test, not all (plumb import stores each in the file's open transaction).
  // Default: parse(), then each. Throws like parse(); tests already handed over stay handed over.
  using TestSink = std::function<void(ImportedTest&&)>;
  virtual void parse_each(std::string_view text, std::string_view file,
                          const ImportOptions& options, const TestSink& sink) const;
};

std::span<const Importer* const> importers();
const Importer& find_importer(std::string_view name);
// The first importer whose detect() accepts `text`; Error naming the formats when none does.
const Importer& detect_importer(std::string_view text, std::string_view file);

// plumb's name of a collective given as plumb or nccl-tests spells it ("all_reduce_perf",
// "allreduce"), or an Error "<where>: unknown collective 'frob_perf' (did you mean ..?); expected
// one of allreduce, ...": what importers check a log's names with, and plumb import --collective.
std::string known_collective(std::string_view name, std::string_view where);

const Importer& nccl_tests_text_importer();
const Importer& nccl_tests_json_importer();
const Importer& hccl_test_importer();
const Importer& osu_importer();

}  // namespace plumb::baseline
