// The allocator policies `plumb mem replay` knows, and the settings a user may change on them
// (PYTORCH_CUDA_ALLOC_CONF's names; docs/mem.md, "Replay").
#include <fmt/format.h>

#include <charconv>
#include <functional>
#include <map>

#include "common/error.h"
#include "common/strings.h"
#include "mem/replay.h"

namespace plumb::mem {
namespace {

AllocatorPolicy caching(std::string name, std::string description) {
  AllocatorPolicy p;
  p.name = std::move(name);
  p.description = std::move(description);
  return p;
}

std::vector<AllocatorPolicy> make_builtin() {
  std::vector<AllocatorPolicy> all;
  all.push_back(caching("pytorch", "PyTorch caching allocator, default settings"));
  all.push_back(caching("expandable", "PyTorch, expandable_segments:True"));
  all.back().expandable_segments = true;
  all.push_back(caching("max-split-128", "PyTorch, max_split_size_mb:128"));
  all.back().max_split_size = 128ull << 20;
  all.push_back(caching("roundup-4", "PyTorch, roundup_power2_divisions:4"));
  all.back().roundup_power2_divisions = 4;
  all.push_back(caching("torch_npu", "torch_npu caching allocator (32-byte pad), default settings"));
  all.back().pad = 32;
  all.push_back(caching("best-fit", "one arena, best fit with coalescing, no pools or cached segments"));
  all.back().kind = AllocatorPolicy::Kind::kBestFit;
  all.push_back(caching("bucketed", "PyTorch, the program's sizes bucketed to 8 steps per power of 2"));
  all.back().bucket_divisions = 8;
  return all;
}

uint64_t number(const std::string& spec, const std::string& key, const std::string& value) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    throw Error(fmt::format("--policies '{}': {} must be a non-negative integer, not '{}'", spec,
                            key, value));
  }
  return v;
}

bool truth(const std::string& spec, const std::string& key, const std::string& value) {
  if (value == "True" || value == "true" || value == "1") return true;
  if (value == "False" || value == "false" || value == "0") return false;
  throw Error(fmt::format("--policies '{}': {} must be True or False, not '{}'", spec, key, value));
}

using Setter = std::function<void(AllocatorPolicy&, const std::string& spec, const std::string& key,
                                  const std::string& value)>;

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"max_split_size_mb",
       [](AllocatorPolicy& p, const auto& s, const auto& k, const auto& v) {
         const uint64_t mb = number(s, k, v);
         if (mb <= 20) {
           throw Error(fmt::format("--policies '{}': {} must be more than 20 (PyTorch's rule), not {}",
                                   s, k, v));
         }
         p.max_split_size = mb << 20;
       }},
      {"roundup_power2_divisions",
       [](AllocatorPolicy& p, const auto& s, const auto& k, const auto& v) {
         const uint64_t d = number(s, k, v);
         if (d > 1 && (d & (d - 1)) != 0) {
           throw Error(fmt::format("--policies '{}': {} must be a power of 2, not {}", s, k, v));
         }
         p.roundup_power2_divisions = static_cast<unsigned>(d);
       }},
      {"garbage_collection_threshold",
       [](AllocatorPolicy& p, const auto& s, const auto& k, const auto& v) {
         double t = 0;
         const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), t);
         if (ec != std::errc() || end != v.data() + v.size() || !(t > 0 && t < 1)) {
           throw Error(fmt::format("--policies '{}': {} must be between 0 and 1 (exclusive), not '{}'",
                                   s, k, v));
         }
         p.gc_threshold = t;
       }},
      {"expandable_segments",
       [](AllocatorPolicy& p, const auto& s, const auto& k, const auto& v) {
         p.expandable_segments = truth(s, k, v);
       }},
      {"bucket_divisions",
       [](AllocatorPolicy& p, const auto& s, const auto& k, const auto& v) {
         p.bucket_divisions = static_cast<unsigned>(number(s, k, v));
       }},
  };
  return table;
}

std::vector<std::string> names_of(const std::vector<AllocatorPolicy>& all) {
  std::vector<std::string> names;
  for (const auto& p : all) names.push_back(p.name);
  return names;
}

}  // namespace

const std::vector<AllocatorPolicy>& builtin_policies() {
  static const std::vector<AllocatorPolicy> all = make_builtin();
  return all;
}

AllocatorPolicy policy_from_spec(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const auto& all = builtin_policies();
  const auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
  if (it == all.end()) {
    const auto names = names_of(all);
    throw Error(unknown_name("--policies", "policy", name, names));
  }
  AllocatorPolicy p = *it;
  if (colon == std::string::npos) return p;
  std::vector<std::string> keys;
  for (const auto& [key, setter] : setters()) keys.push_back(key);
  for (const std::string& item : split_list(spec.substr(colon + 1), ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const auto setter = setters().find(key);
    if (setter == setters().end()) throw Error(unknown_name(fmt::format("--policies '{}'", spec), "setting", key, keys));
    if (eq == std::string::npos) {
      throw Error(fmt::format("--policies '{}': {} needs a value ({}=VALUE)", spec, key, key));
    }
    setter->second(p, spec, key, item.substr(eq + 1));
  }
  p.name = spec;
  p.description += ", " + spec.substr(colon + 1);
  return p;
}

std::vector<AllocatorPolicy> policies_from_list(const std::string& list) {
  if (list == "all") return builtin_policies();
  std::vector<std::string> specs;
  for (const std::string& item : split_list(list, ',')) {
    const bool continues = item.find('=') != std::string::npos && item.find(':') == std::string::npos;
    if (continues && !specs.empty()) {
      specs.back() += "," + item;
    } else {
      specs.push_back(item);
    }
  }
  if (specs.empty()) throw Error("--policies: empty; give policy names or 'all'");
  std::vector<AllocatorPolicy> out;
  for (const std::string& spec : specs) out.push_back(policy_from_spec(spec));
  return out;
}

}  // namespace plumb::mem
