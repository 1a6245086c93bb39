#include "support/processes.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace plumb::test {
namespace {

// The NUL-separated fields of a /proc file.
std::vector<std::string> fields(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  std::string field;
  while (std::getline(in, field, '\0')) out.push_back(field);
  return out;
}

bool zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z';
}

}  // namespace

std::vector<Process> processes_with(const std::string& marker) {
  std::vector<Process> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == getpid()) continue;
    Process p{pid, fields(entry.path().string() + "/cmdline")};
    bool match = false;
    for (const std::string& word : p.argv) match = match || word.find(marker) != std::string::npos;
    if (match && !zombie(pid)) found.push_back(std::move(p));
  }
  return found;
}

std::string environment_of(pid_t pid, const std::string& name) {
  for (const std::string& entry : fields("/proc/" + std::to_string(pid) + "/environ")) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "";
}

std::vector<std::string> thread_names(pid_t pid) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    if (std::getline(in, name)) names.push_back(name);
  }
  return names;
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace plumb::test
