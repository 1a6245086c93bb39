// One line of plumb.train-events/1, the JSONL a training job appends to once per step (schema in
// docs/train-events.md; contrib/plumb_train_events.py writes it). Required: schema, step,
// step_seconds; everything else is optional and absent when not given. A value no measurement can
// be (value_bounds.h: a busbw above 1e14 B/s, a duration or size out of range, a layer plumb comm
// does not know) makes the line malformed, as a wrong type does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plumb::exporter {

inline constexpr const char* kTrainEventsSchema = "plumb.train-events/1";

struct TrainCollective {
  std::string collective;  // a plumb comm name: allreduce, allgather, ... (nccl-tests spellings too)
  std::string layer = "world";  // world, node, rail or spine (comm::layer_names())
  uint64_t bytes = 0;      // the message size as nccl-tests' "size" column counts it
  double seconds = 0;      // the call's duration
  int ranks = 0;           // ranks in the collective's group
  double busbw_bytes_per_second = 0;  // computed: bytes / seconds × bus factor(ranks)
};

struct TrainEvent {
  int64_t step = 0;
  double step_seconds = 0;
  std::optional<double> time;    // Unix seconds
  std::optional<double> tokens;  // tokens processed in the step (all ranks' or this rank's:
                                 // the writer's choice, docs/train-events.md)
  std::string rank;              // "" when not given
  std::optional<int64_t> world_size;
  std::string device;            // "" when not given
  std::optional<double> allocated_bytes;
  std::optional<double> reserved_bytes;
  std::optional<double> peak_bytes;
  std::string checkpoint;  // "saved" or "loaded": the first line after a checkpoint save or load
                           // finished; "" when not given
  std::vector<std::pair<std::string, double>> operators;  // name, seconds (in the line's order)
  std::vector<TrainCollective> collectives;
};

// Parses one line (without its newline). Throws plumb::Error with what is wrong and no file
// position ("'step' is a string, expected a whole number"): the caller adds "events FILE:LINE: ".
TrainEvent parse_train_event(std::string_view line);

}  // namespace plumb::exporter
