// plumb serve bench, the real binary, through a real HTTP/2 and TLS server: Debian's nghttpx
// (nghttp2-proxy) in front of plumb serve mock, whose programmed timings are the truth. HTTP/2
// over TLS (ALPN) and HTTP/1.1 over TLS with a private CA given by --cacert, h2c (prior
// knowledge), the connect error of an unverified certificate, and an unreadable --cacert
// (docs/serve.md, the engine). nghttpx's access log says which protocol each request came in
// on and from which client port: how many TCP connections carried the streams.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "common/json.h"
#include "common/regex.h"
#include "support/service.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

// The mock's programmed truth: 50 ms to the first token, 10 ms between tokens, 16 tokens.
constexpr double kTtftMs = 50;
constexpr double kItlMs = 10;
constexpr int kTokens = 16;
constexpr int kConcurrency = 4;
constexpr int kRequests = 16;
// What the proxy and the machine may add at the median: one more loopback hop each way through
// nghttpx (below what a loaded machine's noise lets one measure: c=1 through it and direct
// differed by -6 to +10 ms between repeats), plus the scheduling of three processes (mock,
// proxy, client) on a loaded 2-core CI machine, where even a direct run's TTFT p50 was seen
// 10 ms over the truth and through the proxy 14 ms. A real fault in the path (a proxy buffering
// the stream, a queue for backend connections, a TLS handshake per request) shows as whole
// ITLs per token or whole TTFTs, far over these.
constexpr double kTtftSlackMs = 25;
constexpr double kItlSlackMs = 5;

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

std::string nghttpx_path() {
  for (const char* path : {"/usr/sbin/nghttpx", "/usr/bin/nghttpx"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

void wait_until_answering(const std::string& url) {
  for (int i = 0; i < 100 && http(url + "/metrics").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// A private CA and a server certificate it signs for 127.0.0.1, made with Debian's openssl.
void make_certificates(const std::string& dir) {
  const std::string q = " >/dev/null 2>&1";
  const std::string cmd =
      "cd " + dir + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
      "-days 2 -subj '/CN=plumb test CA'" + q +
      " && openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
      "-subj '/CN=127.0.0.1'" + q +
      " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.cnf"
      " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out server.pem -days 2 -extfile san.cnf" + q;
  ASSERT_EQ(run_command(cmd).exit_code, 0) << "openssl failed making the test certificates";
}

// plumb serve mock behind nghttpx: an h2c front end (also HTTP/1.1) and a TLS front end that
// offers h2 and http/1.1 by ALPN; HTTP/1.1 to the mock.
struct Stack {
  std::string dir;
  int mock_port = free_port();
  int h2c_port = free_port();
  int tls_port = free_port();
  Service mock;
  Service proxy;
  explicit Stack(const std::string& d)
      : dir(d),
        mock("plumb serve mock",
             kPlumb + " serve mock --port " + std::to_string(mock_port) +
                 " --ttft 50ms --itl 10ms --tokens 16",
             d + "/mock.log"),
        proxy("nghttpx", proxy_command(), d + "/nghttpx.log") {
    wait_until_answering("http://127.0.0.1:" + std::to_string(mock_port));
    wait_until_answering("http://127.0.0.1:" + std::to_string(h2c_port));
  }
  std::string proxy_command() const {
    return nghttpx_path() + " --conf=/dev/null --no-ocsp --workers=1 -f '127.0.0.1," +
           std::to_string(h2c_port) + ";no-tls' -f '127.0.0.1," + std::to_string(tls_port) +
           "' -b '127.0.0.1," + std::to_string(mock_port) + "' --accesslog-file=" + dir +
           "/access.log --accesslog-format='$remote_port $alpn $status $request' " + dir +
           "/server.key " + dir + "/server.pem";
  }
  std::string tls_url() const { return "https://127.0.0.1:" + std::to_string(tls_port); }
  std::string h2c_url() const { return "http://127.0.0.1:" + std::to_string(h2c_port); }
};

// The bench's POSTs in nghttpx's access log: the protocol each came in on, and the client
// ports (one per TCP connection). The readiness probes were GETs.
struct Access {
  std::set<std::string> alpn;
  std::set<std::string> ports;
  int posts = 0;
};

Access read_access(const std::string& path) {
  Access a;
  std::istringstream in(read_file(path));
  std::string port, alpn, status, method;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    fields >> port >> alpn >> status >> method;
    if (method != "POST") continue;
    a.alpn.insert(alpn + " " + status);
    a.ports.insert(port);
    ++a.posts;
  }
  return a;
}

std::string bench(const std::string& url_and_flags, const std::string& json) {
  return kPlumb + " serve bench -q --url " + url_and_flags + " --model mock --concurrency " +
         std::to_string(kConcurrency) + " --requests " + std::to_string(kRequests) +
         " --input-tokens 16 --output-tokens " + std::to_string(kTokens) + " --json " + json;
}

// Exit 0, or 1 only for the client's keep-up verdict (lag p99 over 1 ms), which a loaded 2-core
// machine can turn and which is not what these tests are about; every request's success is
// checked in the JSON.
void expect_ran_through(const plumb::test::Run& run) {
  if (run.exit_code == 1) {
    EXPECT_EQ(last_line(run.out).rfind("plumb serve bench: the client fell behind (", 0), 0u)
        << run.out << run.err;
    return;
  }
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// Every request through, the tokens the mock sent, and its timings to within the proxy's hop.
void expect_the_mocks_truth(const std::string& json_path) {
  const auto doc = parse_json(read_file(json_path), json_path);
  ASSERT_EQ(doc["runs"].size(), 1u);
  const auto& run = doc["runs"][0];
  EXPECT_EQ(run["completed"], kRequests);
  EXPECT_EQ(run["errors"], 0);
  EXPECT_EQ(run["output_tokens"], kRequests * kTokens);
  EXPECT_EQ(run["itl_ms"]["count"], kRequests * (kTokens - 1));
  const double ttft = run["ttft_ms"]["p50"].get<double>();
  const double itl = run["itl_ms"]["p50"].get<double>();
  const double tpot = run["tpot_ms"]["p50"].get<double>();
  const double e2e = run["e2e_ms"]["p50"].get<double>();
  const double e2e_truth = kTtftMs + (kTokens - 1) * kItlMs;
  EXPECT_GE(ttft, kTtftMs);
  EXPECT_LT(ttft, kTtftMs + kTtftSlackMs);
  // A gap read late makes the next one short, so a single gap's median has no floor on a loaded
  // machine (8 ms was seen for 10); a request's mean gap (TPOT) has, less a late first token
  // spread over 15 gaps.
  EXPECT_GE(tpot, kItlMs * 0.9);
  EXPECT_LT(tpot, kItlMs + kItlSlackMs);
  EXPECT_LT(itl, kItlMs + kItlSlackMs);
  EXPECT_GE(e2e, e2e_truth);
  EXPECT_LT(e2e, e2e_truth + kTtftSlackMs);
}

class ServeH2Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    // Not a skip: scripts/install-deps installs nghttp2-proxy, so CI always runs these.
    ASSERT_FALSE(nghttpx_path().empty()) << "nghttpx missing: scripts/install-deps installs "
                                            "Debian's nghttp2-proxy";
    dir_ = temp_dir("serve_h2_tls");
    make_certificates(dir_);
  }
  std::string dir_;
};

TEST_F(ServeH2Tls, Http2OverTlsWithAPrivateCaMultiplexesOnOneConnection) {
  Stack stack(dir_);
  const plumb::test::Run run = run_command(bench(stack.tls_url() + " --http2 --cacert " + dir_ + "/ca.pem",
                                    dir_ + "/out.json"));
  expect_ran_through(run);
  expect_the_mocks_truth(dir_ + "/out.json");
  const Access access = read_access(dir_ + "/access.log");
  EXPECT_EQ(access.posts, kRequests);
  EXPECT_EQ(access.alpn, std::set<std::string>{"h2 200"});
  EXPECT_EQ(access.ports.size(), 1u) << "HTTP/2 streams are multiplexed on one connection";
}

TEST_F(ServeH2Tls, Http1OverTlsWithAPrivateCaKeepsAConnectionPerStream) {
  Stack stack(dir_);
  const plumb::test::Run run = run_command(bench(stack.tls_url() + " --cacert " + dir_ + "/ca.pem",
                                    dir_ + "/out.json"));
  expect_ran_through(run);
  expect_the_mocks_truth(dir_ + "/out.json");
  const Access access = read_access(dir_ + "/access.log");
  EXPECT_EQ(access.posts, kRequests);
  EXPECT_EQ(access.alpn, std::set<std::string>{"http/1.1 200"});
  EXPECT_EQ(access.ports.size(), static_cast<size_t>(kConcurrency)) << "kept alive and reused";
}

// The libcurl plumb opens is the system's, the one the curl command links.
std::string libcurl_version() {
  const plumb::test::Run run = run_command("curl --version");
  const Regex pattern("libcurl/([0-9.]+)");
  std::array<std::string_view, 2> groups;
  return pattern.search(run.out, groups) ? std::string(groups[1]) : "";
}

TEST_F(ServeH2Tls, H2cThroughARealHttp2Server) {
  Stack stack(dir_);
  const std::string version = libcurl_version();
  ASSERT_FALSE(version.empty()) << "curl --version names no libcurl";
  const plumb::test::Run run = run_command(bench(stack.h2c_url() + " --http2", dir_ + "/out.json"));
  if (std::atoi(version.c_str()) < 8) {
    // Debian 12's 7.88.1 gets a connection's first stream through and drops the rest: refused
    // before any request rather than measured as 15 dropped streams out of 16.
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_EQ(last_line(run.err),
              "plumb: error: plumb serve: --http2 on http:// (h2c): this libcurl (" + version +
                  ") fails every stream after a connection's first (curl issue 10634, fixed in "
                  "8.0.0); use https:// (HTTP/2 by ALPN) or leave out --http2");
    EXPECT_EQ(read_access(dir_ + "/access.log").posts, 0);
    return;
  }
  expect_ran_through(run);
  expect_the_mocks_truth(dir_ + "/out.json");
  const Access access = read_access(dir_ + "/access.log");
  EXPECT_EQ(access.alpn, std::set<std::string>{"h2c 200"});
  EXPECT_EQ(access.ports.size(), 1u);
}

TEST_F(ServeH2Tls, AnUnverifiedCertificateIsAConnectErrorLine) {
  Stack stack(dir_);
  const plumb::test::Run run = run_command(kPlumb + " serve bench -q --url " + stack.tls_url() +
                              " --model mock --concurrency 1 --requests 2 --output-tokens 4");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("plumb serve bench: c=1: 2 requests failed (connect); the first: SSL "
                         "certificate problem: unable to get local issuer certificate"),
            std::string::npos)
      << run.err;
  // The line may go on with the keep-up verdict, which a loaded machine can turn.
  EXPECT_EQ(last_line(run.out).rfind("plumb serve bench: 2 of 2 requests failed (connect 2)", 0),
            0u)
      << run.out;
}

TEST_F(ServeH2Tls, AnUnreadableCacertIsUsageErrorNamingTheFile) {
  const std::string missing = dir_ + "/no-such-ca.pem";
  plumb::test::Run run = run_command(kPlumb + " serve bench --url https://127.0.0.1:1 --model mock -c 1 -n 1 "
                        "--cacert " + missing);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(last_line(run.err), "plumb: error: plumb serve: --cacert " + missing +
                                    ": cannot read: No such file or directory");
  run = run_command(kPlumb + " serve bench --url https://127.0.0.1:1 --model mock -c 1 -n 1 "
                    "--cacert " + dir_);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(last_line(run.err),
            "plumb: error: plumb serve: --cacert " + dir_ + ": cannot read: Is a directory");
  run = run_command(kPlumb + " serve bench --help");
  EXPECT_NE(run.out.find("--cacert"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace plumb::test
