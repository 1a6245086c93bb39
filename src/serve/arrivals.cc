#include "serve/arrivals.h"

#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::serve {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// The gap to the next arrival, in seconds.
double next_gap(const ArrivalPlan& plan, Random& random) {
  switch (plan.kind) {
    case Arrival::constant:
      return 1.0 / plan.rate;
    case Arrival::gamma:
      return random.gamma(plan.burstiness, 1.0 / (plan.rate * plan.burstiness));
    case Arrival::poisson:
      break;
  }
  return random.exponential(plan.rate);
}

}  // namespace

Random::Random(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Random::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
double Random::uniform_open() { return 1.0 - uniform(); }
double Random::exponential(double rate) { return -std::log(uniform_open()) / rate; }

double Random::normal() {
  constexpr double kTwoPi = 6.283185307179586;
  return std::sqrt(-2.0 * std::log(uniform_open())) * std::cos(kTwoPi * uniform());
}

// Marsaglia and Tsang (2000), "A simple method for generating gamma variables"; a shape below 1
// draws gamma(shape + 1) and scales it by U^(1/shape) (their section 6).
double Random::gamma(double shape, double scale) {
  if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform_open(), 1.0 / shape);
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform_open();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

std::int64_t Random::integer(std::int64_t low, std::int64_t high) {
  if (high <= low) return low;
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(next() % span);
}

std::span<const std::string> arrival_names() {
  static const std::vector<std::string> names = {"poisson", "constant", "gamma"};
  return names;
}

Arrival parse_arrival(const std::string& name) {
  const auto names = arrival_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Arrival>(i);
  }
  throw Error(unknown_name("--arrival", "arrival", name, names));
}

std::vector<Nanos> arrival_times(const ArrivalPlan& plan, Random& random) {
  std::vector<Nanos> times;
  const bool all_at_once = std::isinf(plan.rate);
  double t = 0;
  for (std::int64_t i = 0; plan.count == 0 || i < plan.count; ++i) {
    const auto at = static_cast<Nanos>(std::llround(t * 1e9));
    if (plan.duration_ns > 0 && at >= plan.duration_ns) break;
    times.push_back(at);
    if (!all_at_once) t += next_gap(plan, random);
  }
  return times;
}

}  // namespace plumb::serve
