// plumb k8s job: the manifest that runs plumb (plumb baseline by default) across N nodes of a
// Kubernetes cluster under a gang scheduler: a Volcano Job or a JobSet queued by Kueue
// (docs/k8s.md). Writes YAML; applies nothing.
#pragma once

#include <string>

#include "k8s/job_spec.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct K8sCommandOptions {
  k8s::JobSpec job;
  std::string output = "-";
};

void setup_k8s(CLI::App& app, K8sCommandOptions& options);
int run_k8s(const K8sCommandOptions& options);

}  // namespace plumb::cli
