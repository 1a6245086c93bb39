// Headless Chromium for the HTML reports' browser tests: run it on a page, and pick out what the
// page said on its console.
#pragma once

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace plumb::test {

inline constexpr int kChromiumTimeoutSeconds = 120;  // a cold start on a 2-core VM takes 3 to 5 s

// Why the browser tests cannot run here ("" when they can).
inline std::string chromium_missing() {
  if (run_command("command -v chromium").exit_code == 0) return "";
  return "chromium is not installed: run scripts/install-deps (it installs Debian's chromium, "
         "which the HTML reports' browser tests need)";
}

// Headless Chromium with `args`, in a fresh profile named after `name`.
inline Run chromium(const std::string& args, const std::string& name) {
  const std::string profile = temp_dir("chromium-profile-" + name);
  return run_command(fmt::format(
      "timeout {} chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir={} --enable-logging=stderr --v=0 {}",
      kChromiumTimeoutSeconds, profile, args));
}

// Lines where the page spoke on its console or threw (report_browser_test.cc shows the format
// and checks that the filter catches both).
inline std::vector<std::string> page_console_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace plumb::test
