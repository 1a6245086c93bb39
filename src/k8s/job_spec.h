// What plumb k8s job is asked for: N nodes of D accelerators each, the scheduler that gangs them,
// and the plumb command every node runs. The checks that hold for every scheduler, the vendors'
// device resources, and the launcher's and the workers' shell scripts (docs/k8s.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::k8s {

struct JobSpec {
  int nodes = 0;
  int devices_per_node = 0;
  std::string vendor = "nvidia";
  std::string image = "plumb:latest";
  std::string queue = "default";
  std::string priority_class;          // empty: none
  std::string namespace_name;          // empty: kubectl's current namespace
  std::string name = "plumb-baseline";
  std::string scheduler = "volcano";
  std::string launcher = "mpi";        // mpi (a launcher pod runs mpirun) or ray (KubeRay)
  std::string ray_kind;                // --launcher ray: job (empty) or cluster
  std::string network_topology;        // empty, hard or soft (Volcano)
  std::optional<int> highest_tier;     // not given: none
  int max_retry = 3;                   // restarts of the whole job after a pod failed (a RayJob's
                                       // backoffLimit; a RayCluster has none)
  bool pod_network = false;            // true: the pod network instead of the host's
  std::string ssh_secret;              // Kueue: the Secret with the keys; empty: NAME-ssh
  std::vector<std::string> command;    // plumb's arguments; empty: baseline
};

// Limits the options are checked against.
inline constexpr int kMaxNodes = 65536;
inline constexpr int kMaxDevicesPerNode = 16;  // Ascend Atlas A3 nodes show 16 NPUs; HGX 8 GPUs
inline constexpr int kMaxRanks = 65536;        // plumb baseline --ranks takes at most this many
inline constexpr int kMaxRetry = 100;
// Volcano sets no upper bound on a HyperNode tier; fabrics have 2 to 4 tiers of switches, so
// 16 only catches a typo.
inline constexpr int kMaxTier = 16;
inline constexpr int kMaxHostName = 63;        // a DNS label (RFC 1123)
inline constexpr int kSshPort = 2222;          // the workers' sshd: 22 is the node's own under
                                               // the host network

// A device vendor: the extended resource its Kubernetes device plugin advertises, and host
// paths its containers need.
struct HostMount {
  std::string name;
  std::string path;
};

struct Vendor {
  std::string name;
  std::string resource;
  std::vector<HostMount> mounts;
};

const std::vector<Vendor>& vendors();
const Vendor& vendor(const std::string& name);  // Error naming --vendor when unknown

// The problems of `spec` that do not depend on the scheduler, each one line, in option order.
std::vector<std::string> common_problems(const JobSpec& spec);

// RFC 1123: a label is at most 63 of a-z, 0-9 and '-', beginning and ending alphanumeric; a
// subdomain is labels joined by '.', at most 253 characters.
bool is_dns_label(std::string_view text);
bool is_dns_subdomain(std::string_view text);

// The pods' plumb command, with the default (baseline) filled in.
std::vector<std::string> plumb_command(const JobSpec& spec);

// `word` as a POSIX shell reads it back: bare when it holds only safe characters, else in
// single quotes.
std::string shell_quote(std::string_view word);

// Where the launcher writes the hostfile that mpirun reads.
inline constexpr const char* kHostfile = "/tmp/plumb.hosts";

// The launcher's script: `write_hostfile` (a scheduler's shell line writing kHostfile, one
// worker and its slots a line), a wait for every worker's sshd, then the plumb command: plumb
// baseline with --hostfile and --ranks (it starts mpirun itself), any other command under mpirun.
std::string launcher_script(const JobSpec& spec, const std::string& write_hostfile);

// The workers' script: host keys, then sshd in the foreground on kSshPort.
std::string worker_script();

// The ssh options mpirun (OMPI_MCA_plm_rsh_args) and the launcher's wait use.
std::string ssh_options();

}  // namespace plumb::k8s
