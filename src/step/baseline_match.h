// What `plumb comm` measured for a collective instance: the stored baseline's busbw for the same
// collective and size on the layer whose groups have as many ranks as the instance's group
// (docs/step.md, "Against the comm baseline").
#pragma once

#include <string>
#include <vector>

#include "comm/measurement_origin.h"
#include "comm/result.h"
#include "step/result.h"
#include "step/trace.h"

namespace plumb::step {

struct BaselineMatch {
  double busbw_gbps = kNaN;
  std::string layer;
};

// Layers are tried in `plumb comm`'s order (world, node, rail, spine) unless `layer` names one.
// Sizes between two measured sizes are interpolated linearly in log(size); outside the measured
// range the nearest size is used. NaN when the baseline holds no such collective with groups of
// `nranks` ranks (or on `layer`).
BaselineMatch match_baseline(const std::vector<comm::Row>& rows, CollectiveKind kind,
                             uint64_t bytes, int nranks, const std::string& layer);

// Fills baseline_busbw_gbps and baseline_layer of every instance; notes the group sizes the
// baseline could not answer for.
void attach_baseline(const std::vector<comm::Row>& rows, const std::string& layer,
                     int world_size, std::vector<CollectiveInstance>& instances,
                     std::vector<std::string>& notes);

// The collective library and device kind the traces show: Ascend exports → (HCCL, Ascend NPU);
// Kineto traces whose collective kernels or ops name NCCL → (NCCL, GPU), Gloo → (Gloo, CPU);
// unknown otherwise.
comm::BackendKind trace_kind(const std::vector<RankTrace>& traces);

// The traces' world size: the first a trace states, else how many ranks were read.
int trace_world_size(const std::vector<RankTrace>& traces);

// One line when the baseline `source` (describe_record) was measured on another backend, device
// kind or world size than the traces: "--baseline <source> was measured on another backend (MPI,
// not NCCL) and device kind (CPU, not GPU) than these traces: its busbw is not what their
// collectives could reach". Empty when nothing known differs.
std::string baseline_mismatch(const std::string& source, const comm::MeasuredOn& on,
                              const std::vector<RankTrace>& traces);

}  // namespace plumb::step
