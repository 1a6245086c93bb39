// The check file: a site's expected values per SKU (plumb.check-file/1, YAML). `plumb check
// genconf` writes one from a known-good node, as LBNL NHC's nhc-genconf does; `plumb check node
// --config FILE` judges a node against it. Without one, each check judges by its own defaults
// (docs/check.md) and compares only what needs no site knowledge.
//
//   schema: plumb.check-file/1
//   sku: 8x H100 SXM5, 8x CX7 400G
//   settings: {tool_timeout_s: 5, checkpoint_dir: /lustre/ckpt}
//   burn_in: {collective: allreduce, bytes: 1G, busbw_gbps: 460}
//   checks:
//     accel.count: {expected: 8}
//     accel.temperature: {warning: 85, critical: 95}
//     host.irqbalance: {enabled: false}      # a check left out
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>

#include "check/check.h"

namespace plumb::check {

inline constexpr const char* kCheckFileSchema = "plumb.check-file/1";

struct CheckFile {
  std::string source = "no check file";  // the path, for messages
  std::string sku;
  std::optional<double> tool_timeout_s;
  std::optional<std::string> checkpoint_dir;
  YAML::Node checks = YAML::Node(YAML::NodeType::Map);
  // plumb check burn-in's thresholds: `burn_in: {collective, bytes, busbw_gbps, baseline_share,
  // h2d_gbps}` (aznhc's per-SKU NCCL all-reduce limit: 460 GB/s on 8x H100 at 16G).
  CheckSection burn_in;

  // The check's section (empty when the file has none).
  CheckSection section(const CheckSpec& spec) const;
  // false when its section says `enabled: false`.
  bool enabled(const CheckSpec& spec) const;
};

// Reads and validates a whole check file in one pass: unknown checks and keys (with "did you
// mean"), a wrong schema, settings out of range. Every problem in one plumb::Error, one per line:
//   "site.yaml:7: unknown check 'acel.count' (did you mean 'accel.count'?)"
CheckFile load_check_file(const std::string& path);
// The same from the file's text; `source` names it in messages.
CheckFile parse_check_file(std::string_view text, const std::string& source);

// `plumb check genconf`: a check file holding this node's values as the expected ones, with
// a comment saying where and when it was written. Checks whose observe gives nothing are left out.
std::string write_check_file(const NodeContext& context, std::string_view sku,
                             std::string_view created);

}  // namespace plumb::check
