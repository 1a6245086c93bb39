// Why an allocation failed. Four causes, in the order they are tested:
//   fragmentation — the free bytes (cached in segments + what the driver still had) would cover
//                   the request, but no free block (nor the driver's remainder) is large enough;
//   creep         — the baseline rose step after step (a leak verdict) by more than the shortfall;
//   spike         — a normal step's peak would have fit: this step asked more than usual (a
//                   collective's temporary buffer, an unusually long sequence) by the shortfall;
//   true_peak     — the step's ordinary peak of parameters, optimizer state and activations does
//                   not fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mem/steps.h"
#include "mem/timeline.h"
#include "mem/trace.h"

namespace plumb::mem {

struct Oom {
  size_t event = 0;             // index of the oom event
  int64_t step = -1;            // the step it fell in, −1 without steps
  uint64_t requested_bytes = 0;
  uint64_t device_free_bytes = 0;   // what the driver still had
  uint64_t cached_free_bytes = 0;   // reserved − live, inside the segments
  uint64_t free_bytes = 0;          // cached + device
  uint64_t largest_free_block_bytes = 0;  // the largest free range inside one segment
  uint64_t allocated_bytes = 0;     // live at the failure
  uint64_t reserved_bytes = 0;
  uint64_t shortfall_bytes = 0;     // requested − free (0 when fragmentation)
  uint64_t usual_step_peak_bytes = 0;  // median peak of the steps before (0: none)
  std::string cause;                // fragmentation, creep, spike, true_peak
  std::string explanation;          // one sentence with the numbers

  bool operator==(const Oom&) const = default;
};

std::vector<Oom> classify_ooms(const Trace& t, const Timeline& tl, const Steps& steps,
                               const Creep& creep);

}  // namespace plumb::mem
