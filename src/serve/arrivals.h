// When each request of an open loop is due: gaps drawn from one seed and summed up front into an
// absolute schedule (never a sleep per request, which drifts: vLLM issue 21104 delivered 183 of
// 200 req/s). Poisson (exponential gaps), constant, or gamma with a burstiness factor as vLLM
// bench serve defines it: shape = burstiness, scale = 1 / (rate * burstiness), so the mean gap
// stays 1/rate and burstiness 1 is Poisson (docs/serve.md, "Arrivals").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "serve/request.h"

namespace plumb::serve {

// A small, portable generator (splitmix64 seeding xoshiro256**): the same seed draws the same
// numbers on every platform and standard library, unlike std::*_distribution.
class Random {
 public:
  explicit Random(std::uint64_t seed);
  std::uint64_t next();
  double uniform();                                           // in [0, 1), 53 bits
  double uniform_open();                                      // in (0, 1]
  double exponential(double rate);                            // mean 1 / rate
  double normal();                                            // mean 0, sd 1 (Box-Muller)
  double gamma(double shape, double scale);                   // Marsaglia-Tsang
  std::int64_t integer(std::int64_t low, std::int64_t high);  // uniform in [low, high]

 private:
  std::uint64_t s_[4];
};

enum class Arrival { poisson, constant, gamma };
// "poisson", "constant", "gamma": the names --arrival takes.
std::span<const std::string> arrival_names();
// The arrival named `name`, or an Error (exit 2): "--arrival: unknown arrival 'posson' (did you
// mean 'poisson'?); expected one of poisson, constant, gamma".
Arrival parse_arrival(const std::string& name);

struct ArrivalPlan {
  Arrival kind = Arrival::poisson;
  double rate = 0;  // requests/s; infinity: every request due at 0 (vLLM's --request-rate inf)
  double burstiness = 1;   // gamma's shape
  std::int64_t count = 0;  // at most this many arrivals; 0: no limit (needs duration_ns)
  Nanos duration_ns = 0;   // only arrivals before this; 0: no limit (needs count)
};

// The first request is due at 0; each next one a drawn gap later (the sums kept in double seconds
// and rounded once, so no rounding error accumulates).
std::vector<Nanos> arrival_times(const ArrivalPlan& plan, Random& random);

}  // namespace plumb::serve
