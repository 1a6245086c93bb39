// plumb run under test: the real binary supervising the stand-in trainer
// (tests/fixtures/run/fake_trainer.py), its plumb.run-events/1 file read back.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "support/processes.h"
#include "support/subprocess.h"

namespace plumb::test {

inline const std::string kPlumb = PLUMB_BIN;
inline const std::string kTrainer =
    "python3 " + std::string(PLUMB_TEST_FIXTURES) + "/run/fake_trainer.py";

inline std::vector<nlohmann::json> events_of(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

inline std::vector<nlohmann::json> of_kind(const std::vector<nlohmann::json>& events,
                                           const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : events) {
    if (e["event"] == kind) out.push_back(e);
  }
  return out;
}

struct Supervised {
  test::Run run;
  std::vector<nlohmann::json> events;
  double seconds = 0;
};

inline Supervised supervise(const std::string& name, const std::string& options,
                            const std::string& trainer_args) {
  const std::string events = temp_dir(name) + "/events.jsonl";
  const auto start = std::chrono::steady_clock::now();
  Supervised s;
  s.run = run_command("env PLUMB_TEST_TAG=" + name + " " + kPlumb + " run --backoff 0.1 --kill-grace 2 --events " + events + " " +
                      options + " -- " + kTrainer + " " + trainer_args);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.events = events_of(events);
  return s;
}

// The processes a supervise(name, ...) run left whose command line holds `word`: told apart from
// those of run tests running in parallel (ctest -j) by PLUMB_TEST_TAG=name in their environment.
inline std::vector<Process> left_behind(const std::string& name, const std::string& word) {
  std::vector<Process> out;
  for (const Process& p : processes_with(word)) {
    if (environment_of(p.pid, "PLUMB_TEST_TAG") == name) out.push_back(p);
  }
  return out;
}

}  // namespace plumb::test
