// What `plumb comm` measured for a collective instance: the stored baseline's busbw for the same
// collective and size on the layer whose groups have as many ranks as the instance's group
// (docs/step.md, "Against the comm baseline").
#pragma once

#include <string>
#include <vector>

#include "comm/result.h"
#include "step/result.h"

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

}  // namespace plumb::step
