#include "support/subprocess.h"

#include <cerrno>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace plumb::test {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string temp_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(PLUMB_TEST_TMP) / (name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string error_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Run run_command(const std::string& command) {
  static int counter = 0;
  const std::string dir = temp_dir("run" + std::to_string(counter++));
  const std::string out = dir + "/stdout";
  const std::string err = dir + "/stderr";
  const int status = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  Run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = read_file(out);
  run.err = read_file(err);
  std::filesystem::remove_all(dir);
  return run;
}

std::string mpirun(int ranks) {
  return std::string(PLUMB_MPIEXEC) + " --allow-run-as-root --oversubscribe -np " +
         std::to_string(ranks);
}

}  // namespace plumb::test
