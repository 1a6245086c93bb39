// plumb exporter, the real binary: --once, serving /metrics and /healthz on a port it picked,
// SIGTERM, and the --listen errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/json.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

using Clock = std::chrono::steady_clock;
const std::string kPlumb = PLUMB_BIN;

// `plumb exporter ARGS` in the background with its stderr on a pipe.
struct Background {
  pid_t pid = -1;
  int err = -1;  // read end of its stderr

  explicit Background(const std::vector<std::string>& args) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(kPlumb.c_str()));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(kPlumb.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    err = fds[0];
  }
  ~Background() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(err);
  }
  // Its first stderr line (waits up to 10 s).
  std::string first_line() {
    std::string line;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
      pollfd p{err, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(err, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    return line;
  }
  // Its exit code once it ended, within `seconds`; -1 if it did not.
  int wait_exit(double seconds) {
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

// One HTTP/1.0 request to 127.0.0.1:port; the whole answer (the server closes after it).
std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

TEST(ExporterCli, OncePrintsTheMetricsAndExits) {
  const test::Run run = run_command(kPlumb + " exporter --once --device-source none");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "# HELP plumb_exporter_build_info The plumb version serving these metrics; always 1\n"
            "# TYPE plumb_exporter_build_info gauge\n"
            "plumb_exporter_build_info{version=\"" PLUMB_VERSION "\"} 1\n"
            "# HELP plumb_exporter_scrapes_total Answers to /metrics since the exporter started\n"
            "# TYPE plumb_exporter_scrapes_total counter\n"
            "plumb_exporter_scrapes_total 1\n");
  EXPECT_EQ(run.err, "");
}

// Issue 28: values no measurement can be, from each source, with the real binary — the events
// file's 1e-300 s collective (1.8e306 B/s, which hid the bandwidth-low alert), a probe row of
// 1.8e306 B/s, a GPU at 1e300 °C — are left out, counted and logged; the real values stay.
TEST(ExporterCli, ImpossibleValuesOfEverySourceAreCountedNotExported) {
  const std::string dir = temp_dir("exporter-impossible");
  const std::string fixtures = std::string(PLUMB_TEST_FIXTURES) + "/exporter";
  const std::string call = R"({"schema":"plumb.train-events/1","step":STEP,"step_seconds":1,)"
                           R"("rank":0,"collectives":[{"collective":"allreduce","bytes":1048576,)"
                           R"("seconds":SECONDS,"ranks":8,"layer":"node"}]})";
  const auto line = [&](const char* step, const char* seconds) {
    std::string l = call;
    l.replace(l.find("STEP"), 4, step);
    l.replace(l.find("SECONDS"), 7, seconds);
    return l + "\n";
  };
  write_file(dir + "/events.jsonl", line("1", "0.0021") + line("2", "1e-300"));
  nlohmann::json comm = parse_json(read_file(fixtures + "/probe_comm_2ranks.json"), "fixture");
  comm["results"][0]["algbw_gbps"] = 1.8e297;
  comm["results"][0]["busbw_gbps"] = 1.8e297;
  write_file(dir + "/comm.json", comm.dump());
  write_file(dir + "/gpus.csv", "index, name, temperature.gpu, power.draw [W]\n"
                                "0, NVIDIA H100 80GB HBM3, 1e300, 650.25 W\n");
  const test::Run run = run_command(
      "PLUMB_FAKE_NVIDIA_SMI=" + dir + "/gpus.csv " + kPlumb + " exporter --once --host h "
      "--device-source nvidia-smi --nvidia-smi " + fixtures + "/bin/nvidia-smi --events " + dir +
      "/events.jsonl --probe-interval 60 --probe-command 'cat " + dir + "/comm.json'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const std::string& sample :
       {std::string("plumb_train_events_malformed_total{host=\"h\"} 1\n"),
        std::string("plumb_exporter_source_malformed_total{host=\"h\",source=\"nvidia-smi\"} 1\n"),
        std::string("plumb_exporter_source_malformed_total{host=\"h\",source=\"probe\"} 1\n"),
        std::string("plumb_device_power_watts{host=\"h\",device=\"0\",vendor=\"nvidia\","
                    "model=\"NVIDIA H100 80GB HBM3\"} 650.25\n"),
        std::string("plumb_comm_busbw_bytes_per_second{host=\"h\",rank=\"0\",layer=\"node\","
                    "collective=\"allreduce\",bytes=\"1048576\",source=\"events\"} 873813333.3")}) {
    EXPECT_NE(run.out.find(sample), std::string::npos) << sample << "\nnot in:\n" << run.out;
  }
  EXPECT_EQ(run.out.find("plumb_device_temperature_celsius"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("e+306"), std::string::npos) << run.out;
  for (const std::string& logged :
       {"plumb exporter: events " + dir + "/events.jsonl:2: 'collectives[0].seconds' is "
        "'1e-300', expected a number from 1e-07 to 86400\n",
        std::string("plumb exporter: nvidia-smi: device 0: temperature 1e+300 °C, expected "
                    "-273.15 to 200\n"),
        std::string("plumb exporter: probe: results[0] (allreduce, 1048576 bytes, layer world): "
                    "a busbw of 1.8e+306 B/s (algbw 1.8e+306 B/s), above the 1e+14 B/s no link "
                    "or memory reaches\n")}) {
    EXPECT_NE(run.err.find(logged), std::string::npos) << logged << "\nnot in:\n" << run.err;
  }
}

TEST(ExporterCli, ServesMetricsAndHealthzUntilSigterm) {
  Background exporter({"exporter", "--listen", "127.0.0.1:0", "--device-source", "none"});
  const std::string line = exporter.first_line();
  const std::string prefix = "plumb exporter: serving http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const int port = std::stoi(line.substr(prefix.size()));
  EXPECT_EQ(line, prefix + std::to_string(port) + "/metrics; sources: none\n");
  const std::string metrics = http_get(port, "/metrics");
  EXPECT_EQ(metrics.rfind("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                          "charset=utf-8\r\n", 0), 0u) << metrics;
  EXPECT_NE(metrics.find("\r\n\r\n# HELP plumb_exporter_build_info"), std::string::npos);
  EXPECT_NE(metrics.find("plumb_exporter_scrapes_total 1\n"), std::string::npos);
  const std::string health = http_get(port, "/healthz");
  EXPECT_EQ(health.substr(health.size() - 7), "\r\n\r\nok\n");
  EXPECT_EQ(http_get(port, "/nope").rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  ASSERT_EQ(::kill(exporter.pid, SIGTERM), 0);
  EXPECT_EQ(exporter.wait_exit(2.0), 0);  // the server looks at the flag every 100 ms
}

TEST(ExporterCli, ABusyOrMalformedAddressIsExit2WithOneMessage) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string listen = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  const test::Run busy = run_command(kPlumb + " exporter --device-source none --listen " + listen);
  ::close(fd);
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_EQ(busy.err, "plumb: error: --listen " + listen + ": cannot listen: Address already in use\n");
  const test::Run bad = run_command(kPlumb + " exporter --device-source none --listen 9464");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "plumb: error: --listen 9464: expected HOST:PORT\n");
}

}  // namespace
}  // namespace plumb::test
