#include "k8s/job_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::k8s {
namespace {

// How long the launcher waits for the workers' sshd: tries × seconds apart (10 minutes: an image
// pulled on every node first).
constexpr int kSshTries = 300;
constexpr int kSshPause = 2;

std::vector<std::string> vendor_names() {
  std::vector<std::string> names;
  for (const Vendor& v : vendors()) names.push_back(v.name);
  return names;
}

std::string range_problem(const char* option, int value, int least, int most) {
  return fmt::format("{} must be from {} to {}, got {}", option, least, most, value);
}

void check_sizes(const JobSpec& s, std::vector<std::string>& problems) {
  if (s.nodes < 1 || s.nodes > kMaxNodes) {
    problems.push_back(range_problem("--nodes", s.nodes, 1, kMaxNodes));
  }
  if (s.devices_per_node < 1 || s.devices_per_node > kMaxDevicesPerNode) {
    problems.push_back(range_problem("--devices-per-node", s.devices_per_node, 1, kMaxDevicesPerNode));
  }
  const long long ranks = static_cast<long long>(s.nodes) * s.devices_per_node;
  if (s.nodes >= 1 && s.devices_per_node >= 1 && ranks > kMaxRanks) {
    problems.push_back(fmt::format("--nodes {} × --devices-per-node {} is {} ranks; plumb runs at "
                                   "most {}",
                                   s.nodes, s.devices_per_node, ranks, kMaxRanks));
  }
  if (s.max_retry < 0 || s.max_retry > kMaxRetry) {
    problems.push_back(range_problem("--max-retry", s.max_retry, 0, kMaxRetry));
  }
}

void check_label(const char* option, const std::string& value, std::vector<std::string>& problems) {
  if (!is_dns_label(value)) {
    problems.push_back(fmt::format("{} '{}': not a DNS label (RFC 1123): 1 to 63 of a-z, 0-9 and "
                                   "'-', beginning and ending with a letter or digit",
                                   option, value));
  }
}

void check_subdomain(const char* option, const std::string& value,
                     std::vector<std::string>& problems) {
  if (!is_dns_subdomain(value)) {
    problems.push_back(fmt::format("{} '{}': not a DNS subdomain (RFC 1123): labels of a-z, 0-9 "
                                   "and '-' joined by '.', at most 253 characters",
                                   option, value));
  }
}

void check_names(const JobSpec& s, std::vector<std::string>& problems) {
  if (s.image.empty() || std::any_of(s.image.begin(), s.image.end(), [](char c) {
        return std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c));
      })) {
    problems.push_back(fmt::format("--image '{}': name an image every node can pull, e.g. "
                                   "registry.example.com/plumb:1.0",
                                   s.image));
  }
  check_label("--name", s.name, problems);
  if (!s.namespace_name.empty()) check_label("--namespace", s.namespace_name, problems);
  check_label("--queue", s.queue, problems);
  if (!s.priority_class.empty()) check_subdomain("--priority-class", s.priority_class, problems);
  if (!s.ssh_secret.empty()) check_subdomain("--ssh-secret", s.ssh_secret, problems);
}

void check_topology(const JobSpec& s, std::vector<std::string>& problems) {
  const std::vector<std::string> modes = {"hard", "soft"};
  if (!s.network_topology.empty() &&
      std::find(modes.begin(), modes.end(), s.network_topology) == modes.end()) {
    problems.push_back(unknown_name("--network-topology", "mode", s.network_topology, modes));
  }
  if (s.network_topology == "hard" && !s.highest_tier) {
    problems.push_back("--network-topology hard needs --highest-tier: the highest HyperNode tier "
                       "the job may span");
  }
  if (s.network_topology.empty() && s.highest_tier) {
    problems.push_back("--highest-tier needs --network-topology hard or soft");
  }
  if (s.highest_tier && (*s.highest_tier < 1 || *s.highest_tier > kMaxTier)) {
    problems.push_back(range_problem("--highest-tier", *s.highest_tier, 1, kMaxTier));
  }
}

// plumb baseline's options that plumb k8s job gives itself.
bool sets_itself(const std::string& word) {
  for (const char* flag : {"--ranks", "--hostfile", "--launcher", "--worker", "--round-output"}) {
    const std::string f = flag;
    if (word == f || word.rfind(f + "=", 0) == 0) return true;
  }
  return word.rfind("-n", 0) == 0 && word.rfind("--", 0) != 0;  // -n, -n4, -n=4
}

void check_command(const JobSpec& s, std::vector<std::string>& problems) {
  const std::vector<std::string> command = plumb_command(s);
  if (command.front() != "baseline") return;
  for (const std::string& word : command) {
    if (sets_itself(word)) {
      problems.push_back(fmt::format("-- baseline {}: plumb k8s job gives plumb baseline --ranks "
                                     "(--nodes × --devices-per-node) and --hostfile (the workers) "
                                     "itself",
                                     word));
    }
  }
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const std::string& w : words) quoted.push_back(shell_quote(w));
  return join(quoted, " ");
}

// The command line that runs plumb over the workers: plumb baseline starts mpirun itself, any
// other command runs under mpirun.
std::string run_line(const JobSpec& s) {
  std::vector<std::string> command = plumb_command(s);
  const std::string ranks = std::to_string(s.nodes * s.devices_per_node);
  if (command.front() == "baseline") {
    command.insert(command.begin() + 1, {"--hostfile", kHostfile, "--ranks", ranks});
    // The record goes to the log too (plumb export) when one was stored (exit 0, or a verdict:
    // 1 wrong elements or a regression, 3 too noisy): kubectl logs is how it leaves the cluster.
    return fmt::format("status=0\nplumb {} || status=$?\n"
                       "case $status in 0|1|3) plumb export latest ;; esac\n"
                       "exit \"$status\"\n",
                       join_quoted(command));
  }
  return fmt::format("exec mpirun --hostfile {} -np {} plumb {}\n", kHostfile, ranks,
                     join_quoted(command));
}

}  // namespace

// The device plugins' resource names: NVIDIA's k8s-device-plugin advertises nvidia.com/gpu;
// Ascend's ascend-device-plugin huawei.com/Ascend910 (Ascend 910 and 910B), whose containers
// also see the host's driver (gitee.com/ascend/ascend-device-plugin, "Creating a Service
// Container").
const std::vector<Vendor>& vendors() {
  static const std::vector<Vendor> kTable = {
      {"nvidia", "nvidia.com/gpu", {}},
      {"ascend", "huawei.com/Ascend910", {{"ascend-driver", "/usr/local/Ascend/driver"}}},
  };
  return kTable;
}

const Vendor& vendor(const std::string& name) {
  for (const Vendor& v : vendors()) {
    if (v.name == name) return v;
  }
  throw Error(unknown_name("--vendor", "vendor", name, vendor_names()));
}

std::vector<std::string> common_problems(const JobSpec& s) {
  std::vector<std::string> problems;
  check_sizes(s, problems);
  const std::vector<std::string> names = vendor_names();
  if (std::find(names.begin(), names.end(), s.vendor) == names.end()) {
    problems.push_back(unknown_name("--vendor", "vendor", s.vendor, names));
  }
  check_names(s, problems);
  check_topology(s, problems);
  check_command(s, problems);
  return problems;
}

bool is_dns_label(std::string_view text) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (text.empty() || text.size() > static_cast<size_t>(kMaxHostName)) return false;
  if (!alnum(text.front()) || !alnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool is_dns_subdomain(std::string_view text) {
  constexpr size_t kMaxSubdomain = 253;
  if (text.empty() || text.size() > kMaxSubdomain) return false;
  size_t start = 0;
  for (size_t dot = text.find('.'); dot != std::string_view::npos; dot = text.find('.', start)) {
    if (!is_dns_label(text.substr(start, dot - start))) return false;  // "a..b", ".a", "a."
    start = dot + 1;
  }
  return is_dns_label(text.substr(start));
}

std::vector<std::string> plumb_command(const JobSpec& s) {
  return s.command.empty() ? std::vector<std::string>{"baseline"} : s.command;
}

std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./_-").find(c) !=
                                                              std::string_view::npos;
  });
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string ssh_options() {
  return fmt::format("-p {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                     "-o BatchMode=yes -o ConnectTimeout=5 -o LogLevel=ERROR",
                     kSshPort);
}

std::string launcher_script(const JobSpec& s, const std::string& write_hostfile) {
  return fmt::format(
      "set -eu\n"
      "{write}\n"
      "for host in $(cut -d' ' -f1 {hosts}); do\n"
      "  tries=0\n"
      "  until ssh $OMPI_MCA_plm_rsh_args \"$host\" true; do\n"
      "    tries=$((tries + 1))\n"
      "    if [ \"$tries\" -ge {tries} ]; then\n"
      "      echo \"plumb: no sshd answers on $host port {port} after {seconds} s\" >&2\n"
      "      exit 75\n"
      "    fi\n"
      "    sleep {pause}\n"
      "  done\n"
      "done\n"
      "{run}",
      fmt::arg("write", write_hostfile), fmt::arg("hosts", kHostfile), fmt::arg("tries", kSshTries),
      fmt::arg("port", kSshPort), fmt::arg("seconds", kSshTries * kSshPause),
      fmt::arg("pause", kSshPause), fmt::arg("run", run_line(s)));
}

std::string worker_script() {
  return fmt::format("mkdir -p /run/sshd\nssh-keygen -A\nexec /usr/sbin/sshd -D -e -p {} -o "
                     "StrictModes=no\n",
                     kSshPort);
}

}  // namespace plumb::k8s
