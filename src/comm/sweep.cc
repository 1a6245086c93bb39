#include "comm/sweep.h"

#include "comm/rounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "comm/bandwidth.h"
#include "comm/rounds.h"
#include "common/error.h"
#include "common/json.h"
#include "common/stats.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::comm {
namespace {

// Receive buffers start filled with this byte: as int8 it is -128, as int32 −2139062144, as any
// float a tiny negative non-integer -- never a value the patterns produce, so an operation that
// writes nothing shows up as wrong elements.
constexpr unsigned char kSentinelByte = 0x80;

}  // namespace

Bench::Bench(Communicator& group, const Collective& collective, const SweepOptions& options,
             uint64_t largest)
    : group_(group),
      collective_(collective),
      options_(options),
      args_{options.type, options.op, options.root},
      element_size_(info(options.type).size),
      pattern_(collective.uses_op() ? Pattern(options.type, options.op, group.size())
                                    : Pattern(options.type, group.size())) {
  const Counts most = collective_.counts(largest, element_size_, group_.size());
  send_ = group_.allocate(most.send_count * element_size_);
  recv_ = group_.allocate(most.recv_count * element_size_);
  std::vector<unsigned char> input(most.send_count * element_size_);
  for (size_t i = 0; i < most.send_count; ++i) {
    store(options.type, input.data(), i, pattern_.value(group_.rank(), i));
  }
  send_->upload(input.data(), input.size());
  recv_has_input_ = collective_.recv_starts_with_input(group_.rank(), args_);
  if (recv_has_input_) recv_->upload(input.data(), std::min(input.size(), recv_->size()));
}

void Bench::run_once(const Counts& counts) {
  collective_.run(group_, send_->data(), recv_->data(), counts, args_);
}

Row Bench::measure(uint64_t bytes) {
  const Counts counts = collective_.counts(bytes, element_size_, group_.size());
  if (!recv_has_input_) recv_->fill(kSentinelByte, counts.recv_count * element_size_);
  for (int i = 0; i < options_.warmup; ++i) run_once(counts);
  group_.synchronize();

  // Back-to-back loop, timed as nccl-tests times it: this rank's average per operation.
  group_.barrier();
  group_.start_timer();
  for (int i = 0; i < options_.iters; ++i) run_once(counts);
  const double average = group_.stop_timer() / options_.iters;

  // One operation at a time from a common start, for the tail and the straggler.
  std::vector<double> sample = {average, 0.0};
  sample.reserve(2 + static_cast<size_t>(options_.iters));
  for (int i = 0; i < options_.iters; ++i) {
    group_.barrier();
    group_.start_timer();
    run_once(counts);
    sample.push_back(group_.stop_timer());
  }
  sample[1] = options_.check ? static_cast<double>(count_wrong(counts)) : -1.0;
  const std::vector<double> gathered = group_.gather(sample, 0);
  return make_row(bytes, counts, gathered);
}

int64_t Bench::count_wrong(const Counts& counts) const {
  std::vector<unsigned char> out(counts.recv_count * element_size_);
  recv_->download(out.data(), out.size());
  const bool premultiplied = group_.avg_premultiplies(options_.type);
  int64_t wrong = 0;
  for (size_t j = 0; j < counts.recv_count; ++j) {
    const auto want = collective_.expected(pattern_, group_.rank(), group_.size(), counts, args_, j);
    if (!want) continue;
    const double got = load(options_.type, out.data(), j);
    const double slack = pattern_.tolerance(*want, premultiplied);
    if (!(got == *want || std::abs(got - *want) <= slack)) ++wrong;
  }
  return wrong;
}

Row Bench::make_row(uint64_t bytes, const Counts& counts,
                    const std::vector<double>& gathered) const {
  Row row;
  row.collective = std::string(collective_.name());
  row.group_ranks = group_.size();
  row.dtype = std::string(info(options_.type).name);
  row.op = collective_.uses_op() ? std::string(name(options_.op)) : "none";
  row.root = collective_.uses_root() ? options_.root : -1;
  row.requested_bytes = bytes;
  row.bytes = counts.bytes;
  row.count = counts.count;
  if (gathered.empty()) return row;  // not the group's rank 0

  const size_t stride = 2 + static_cast<size_t>(options_.iters);
  const auto n = static_cast<size_t>(group_.size());
  std::vector<double> averages;
  std::vector<double> per_iteration;
  for (size_t r = 0; r < n; ++r) {
    averages.push_back(gathered[r * stride]);
    per_iteration.insert(per_iteration.end(), gathered.begin() + static_cast<long>(r * stride + 2),
                         gathered.begin() + static_cast<long>((r + 1) * stride));
  }
  if (options_.check) {
    row.wrong = 0;
    for (size_t r = 0; r < n; ++r) row.wrong += static_cast<int64_t>(gathered[r * stride + 1]);
  }
  const double seconds = mean(averages);
  row.time_us = seconds * 1e6;
  row.algbw_gbps = algbw_gbps(row.bytes, seconds);
  row.busbw_gbps = busbw_gbps(row.algbw_gbps, collective_.bus_factor(group_.size()));
  const IterationStats tail = iteration_stats(per_iteration, group_.size(), options_.iters);
  row.p50_us = tail.p50_s * 1e6;
  row.p99_us = tail.p99_s * 1e6;
  row.max_us = tail.max_s * 1e6;
  row.straggler = tail.straggler;  // group rank; run_sweep maps it to the world rank
  row.straggler_share = tail.straggler_share;
  return row;
}

namespace {

// Sizes that nccl-tests-style rounding shrank, one note per (layer, collective).
std::vector<std::string> rounding_notes(const std::vector<Row>& rows, const SweepOptions& options) {
  struct Rounded {
    std::set<uint64_t> sizes;  // requested sizes that were rounded
    std::set<int> ranks;       // group sizes they were rounded for
  };
  std::map<std::pair<std::string, std::string>, Rounded> rounded;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Row& row : rows) {
    if (row.bytes == row.requested_bytes) continue;
    const auto key = std::make_pair(row.layer, row.collective);
    if (!rounded.contains(key)) order.push_back(key);
    rounded[key].sizes.insert(row.requested_bytes);
    rounded[key].ranks.insert(row.group_ranks);
  }
  std::vector<std::string> notes;
  const size_t element = info(options.type).size;
  const std::string_view type_name = info(options.type).name;
  for (const auto& key : order) {
    const Rounded& r = rounded[key];
    const int ranks = *r.ranks.begin();
    const bool per_rank = find_collective(key.second).counts(element, element, 2).bytes == 0;
    std::string unit = fmt::format("{} B ({})", element, type_name);
    if (per_rank && r.ranks.size() == 1) {
      unit = fmt::format("{} ({} B {} × {} ranks)", format_bytes(element * static_cast<size_t>(ranks)),
                         element, type_name, ranks);
    } else if (per_rank) {
      unit = fmt::format("{} B ({}) × the group's ranks", element, type_name);
    }
    notes.push_back(fmt::format("{} on layer {}: {} size(s) rounded down to a multiple of {}, as "
                                "nccl-tests does",
                                key.second, key.first, r.sizes.size(), unit));
  }
  return notes;
}

// The items that already appeared earlier in `items`, in order.
std::vector<std::string> repeated(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& item : items) {
    if (!seen.insert(item).second) out.push_back(item);
  }
  return out;
}

}  // namespace

void validate(const SweepOptions& o) {
  std::vector<std::string> problems;
  if (o.min_bytes > o.max_bytes) {
    problems.push_back(fmt::format("--min-bytes {} is larger than --max-bytes {}", o.min_bytes,
                                   o.max_bytes));
  }
  if (o.step_bytes == 0 && o.step_factor < 2) {
    problems.push_back(fmt::format("--step-factor must be at least 2, got {}", o.step_factor));
  }
  if (o.step_bytes == 0 && o.min_bytes == 0 && o.max_bytes > 0) {
    problems.push_back("--min-bytes 0 never grows by a factor; use --step-bytes or --min-bytes > 0");
  }
  if (o.iters < 1 || o.iters > kMaxIters) {
    problems.push_back(fmt::format("--iters must be from 1 to {}, got {}", kMaxIters, o.iters));
  }
  if (o.rounds < 1 || o.rounds > kMaxRounds) {
    problems.push_back(fmt::format("--rounds must be from 1 to {}, got {}", kMaxRounds, o.rounds));
  }
  if (o.timeout_seconds < 0 || o.timeout_seconds > kMaxTimeoutSeconds) {
    problems.push_back(fmt::format("--timeout must be from 0 (no watchdog) to {} seconds, got {}",
                                   kMaxTimeoutSeconds, o.timeout_seconds));
  }
  if (o.warmup < 0) problems.push_back(fmt::format("--warmup must be 0 or more, got {}", o.warmup));
  if (o.root < 0) problems.push_back(fmt::format("--root must be 0 or more, got {}", o.root));
  if (o.collectives.empty()) problems.push_back("--collectives: no collective to run");
  if (o.layers.empty()) problems.push_back("--layers: no layer to run");
  std::vector<std::string> collective_names;
  for (const Collective* c : o.collectives) collective_names.emplace_back(c->name());
  for (const std::string& name : repeated(collective_names)) {
    problems.push_back(fmt::format("--collectives: '{}' is listed twice", name));
  }
  for (const std::string& name : repeated(o.layers)) {
    problems.push_back(fmt::format("--layers: '{}' is listed twice", name));
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
}

std::vector<uint64_t> sweep_sizes(const SweepOptions& o) {
  validate(o);
  std::vector<uint64_t> sizes;
  for (uint64_t size = o.min_bytes; size <= o.max_bytes;) {
    sizes.push_back(size);
    const uint64_t next = o.step_bytes ? size + o.step_bytes : size * o.step_factor;
    if (next <= size) break;  // overflow guard
    size = next;
  }
  return sizes;
}

Row measure(Communicator& group, const Collective& collective, uint64_t bytes,
            const SweepOptions& options) {
  Bench bench(group, collective, options, bytes);
  return bench.measure(bytes);
}

std::vector<Layer> plan_layers(const Placement& placement, const SweepOptions& options) {
  std::vector<Layer> layers = make_layers(placement, options.layers);
  const bool rooted = std::any_of(options.collectives.begin(), options.collectives.end(),
                                  [](const Collective* c) { return c->uses_root(); });
  for (const Layer& layer : layers) {
    if (!rooted || !layer.skipped.empty()) continue;
    for (const Group& g : layer.groups) {
      if (options.root < static_cast<int>(g.ranks.size())) continue;
      throw Error(fmt::format("--root {}: group '{}' of layer {} has {} ranks; the root must be "
                              "below that",
                              options.root, g.name, layer.name, g.ranks.size()));
    }
  }
  return layers;
}

uint64_t host_bytes_per_rank(const SweepOptions& options, const std::vector<Layer>& layers) {
  const uint64_t largest = sweep_sizes(options).back();
  const size_t element = info(options.type).size;
  uint64_t most = 0;
  for (const Layer& layer : layers) {
    for (const Group& g : layer.groups) {
      for (const Collective* c : options.collectives) {
        const Counts counts = c->counts(largest, element, static_cast<int>(g.ranks.size()));
        // the buffers and, on the host, the input written once and the output read back
        most = std::max<uint64_t>(most, 2 * (counts.send_count + counts.recv_count) * element);
      }
    }
  }
  return most;
}

void check_host_memory(const SweepOptions& options, const std::vector<Layer>& layers,
                       int ranks_here, uint64_t host_memory) {
  const uint64_t per_rank = host_bytes_per_rank(options, layers);
  const uint64_t total = per_rank * static_cast<uint64_t>(ranks_here);
  if (total <= host_memory) return;
  throw Error(fmt::format("--max-bytes {}: each rank needs about {} of host memory (buffers and "
                          "their checks), {} for the {} ranks on this host, which has {}; lower "
                          "--max-bytes",
                          format_bytes(options.max_bytes), format_bytes(per_rank),
                          format_bytes(total), ranks_here, format_bytes(host_memory)));
}

namespace {

// Where a sweep stands, for the progress line, the watchdog and the rows' receiver.
struct Tally {
  size_t done = 0;
  size_t total = 0;
  int round_number = 1;
  std::string round;  // " · round 2/3", or empty for a single round
  StepWatch* watch = nullptr;
  const RowsFn* rows = nullptr;

  void begin(const std::string& what) const {
    if (watch) watch->begin(what);
  }
};

std::vector<Row> gather_rows(Communicator& world, const std::vector<Row>& mine,
                             const std::vector<Layer>& layers, const SweepOptions& options);

// The rows of one size, from every group's first rank to world rank 0 (every rank takes part:
// it is a collective over world), handed to the receiver there and kept.
void gather_size(Communicator& world, const std::vector<Row>& measured, const std::string& what,
                 const std::vector<Layer>& layers, const SweepOptions& options, const Tally& tally,
                 std::vector<Row>& kept) {
  tally.begin(what + " · gathering the rows on rank 0");
  std::vector<Row> rows = gather_rows(world, measured, layers, options);
  if (world.rank() != 0) return;
  if (tally.rows != nullptr && *tally.rows) (*tally.rows)(rows, tally.round_number);
  kept.insert(kept.end(), std::make_move_iterator(rows.begin()),
              std::make_move_iterator(rows.end()));
}

// One round: every group of every layer measures; world rank 0 keeps the rows of every group.
void measure_round(Communicator& world, const std::vector<Layer>& layers,
                   const SweepOptions& options, const ProgressFn& progress, Tally& tally,
                   std::vector<Row>& mine) {
  const std::vector<uint64_t> sizes = sweep_sizes(options);
  for (const Layer& layer : layers) {
    if (!layer.skipped.empty()) continue;
    const int group_index = group_of(layer, world.rank());
    tally.begin(fmt::format("{} · splitting into groups{}", layer.name, tally.round));
    std::unique_ptr<Communicator> group = world.split(group_index, world.rank());
    for (const Collective* collective : options.collectives) {
      tally.begin(fmt::format("{} · {} · buffers{}", layer.name, collective->name(), tally.round));
      std::unique_ptr<Bench> bench;
      if (group) bench = std::make_unique<Bench>(*group, *collective, options, sizes.back());
      for (uint64_t bytes : sizes) {
        const std::string what = fmt::format("{} · {} · {}{}", layer.name, collective->name(),
                                             format_bytes(bytes), tally.round);
        if (progress && world.rank() == 0) progress(tally.done, tally.total, what);
        tally.begin(what);
        ++tally.done;
        world.barrier();  // every group of the layer starts each size together
        std::vector<Row> measured;
        if (bench) {
          Row row = bench->measure(bytes);
          if (group->rank() == 0) {
            const Group& g = layer.groups[static_cast<size_t>(group_index)];
            row.layer = layer.name;
            row.group = g.name;
            row.straggler = g.ranks[static_cast<size_t>(row.straggler)];
            measured.push_back(std::move(row));
          }
        }
        gather_size(world, measured, what, layers, options, tally, mine);
      }
    }
  }
}

// Every round, fresh buffers each time (their placement in memory is part of the noise). The rows
// of every group, in measuring order, on world rank 0; nothing elsewhere.
std::vector<Row> measure_layers(Communicator& world, const std::vector<Layer>& layers,
                                const SweepOptions& options, const ProgressFn& progress,
                                StepWatch* watch, const RowsFn& receive) {
  Tally tally;
  tally.watch = watch;
  tally.rows = &receive;
  for (const Layer& layer : layers) {
    if (layer.skipped.empty()) tally.total += options.collectives.size() * sweep_sizes(options).size();
  }
  tally.total *= static_cast<size_t>(options.rounds);
  std::vector<Row> mine;
  for (int round = 1; round <= options.rounds; ++round) {
    if (options.rounds > 1) tally.round = fmt::format(" · round {}/{}", round, options.rounds);
    tally.round_number = round;
    measure_round(world, layers, options, progress, tally, mine);
  }
  return mine;
}

// All groups' rows on world rank 0, in (layer, collective, size, group) order (called per size).
std::vector<Row> gather_rows(Communicator& world, const std::vector<Row>& mine,
                             const std::vector<Layer>& layers, const SweepOptions& options) {
  const nlohmann::json local = mine;
  const std::vector<std::string> all = world.gather_strings(
      local.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
  std::vector<Row> rows;
  for (size_t r = 0; r < all.size(); ++r) {
    for (const auto& j : parse_json(all[r], fmt::format("rank {}'s rows", r))) {
      rows.push_back(j.get<Row>());
    }
  }
  auto order_of = [&](const Row& r) {
    const auto layer = std::find_if(layers.begin(), layers.end(),
                                    [&](const Layer& l) { return l.name == r.layer; });
    const auto coll = std::find_if(options.collectives.begin(), options.collectives.end(),
                                   [&](const Collective* c) { return c->name() == r.collective; });
    return std::make_tuple(layer - layers.begin(), coll - options.collectives.begin(),
                           r.requested_bytes, group_of(*layer, r.straggler));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Row& a, const Row& b) { return order_of(a) < order_of(b); });
  return rows;
}

}  // namespace

Result run_sweep(Communicator& world, const Placement& placement, std::vector<Layer> layers,
                 const SweepOptions& options, const ProgressFn& progress, StepWatch* watch,
                 const RowsFn& receive) {
  Result result;
  result.backend = std::string(world.backend());
  result.ranks = world.size();
  result.placement = placement;
  result.layers = std::move(layers);
  std::vector<Row> rows = measure_layers(world, result.layers, options, progress, watch, receive);
  if (watch) watch->end();
  if (world.rank() != 0) return result;
  result.rows = options.rounds > 1 ? combine_rounds(rows) : std::move(rows);
  for (const Layer& layer : result.layers) {
    if (!layer.skipped.empty()) {
      result.notes.push_back(fmt::format("layer {} skipped: {}", layer.name, layer.skipped));
    }
  }
  for (std::string& note : rounding_notes(result.rows, options)) result.notes.push_back(note);
  return result;
}

}  // namespace plumb::comm
