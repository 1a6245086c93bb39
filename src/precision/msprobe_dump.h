// An msprobe dump: `step*/rank*/dump.json` (+ `dump_tensor_data/`, `stack.json`, `construct.json`,
// which plumb does not need), as msprobe documents it (Ascend/msprobe docs/en/dump/
// pytorch_data_dump_instruct.md and mindspore_data_dump_instruct.md, "dump.json Description"):
//
//   {"task": "statistics" | "tensor", "level": "L0" | "L1" | "mix", "framework": "pytorch",
//    "dump_data_dir": "...", "data": {"Functional.conv2d.0.forward": {"input_args": [...],
//    "input_kwargs": {...}, "output": [...], "parameters": {...}}, "Functional.conv2d.0.backward":
//    {"input": [...], "output": [...]}, "Module.conv2.Conv2d.parameters_grad.0": {...}}}
//
// Each tensor entry holds type, dtype, shape, Max, Min, Mean, Norm, requires_grad and, in tensor
// mode, data_name (the file under dump_tensor_data: .pt from PyTorch, .npy from MindSpore). The
// `data` mapping is written in call order, so the calls are kept in the file's order (the JSON is
// read into an order-keeping tree by nlohmann's SAX interface). Tensors are named as msprobe's
// compare names them (its read_op / op_item_parse): the call, then ".input" (input_args,
// input_kwargs and backward's input), ".output" or ".parameters", then ".<index>" for each list
// and ".<key>" for each mapping on the way down: "Functional.layer_norm.3.forward.output.0",
// "Functional.linear.0.forward.input.bias". Python's json writes NaN, Infinity and -Infinity as
// bare words, which plumb reads as those numbers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "precision/compare.h"

namespace plumb::precision {

struct DumpTensor {
  std::string key;    // "Functional.layer_norm.3.forward.output.0"
  PairRole role = PairRole::kInput;
  std::string dtype;  // as written: "torch.float32", "Float32"
  std::vector<int64_t> shape;
  std::optional<double> max, min, mean, norm;  // absent when null or not written
  std::string data_name;  // tensor mode: the file under dump_tensor_data; else empty
};

struct DumpCall {
  std::string api;                  // "Functional.layer_norm.3.forward"
  std::vector<DumpTensor> tensors;  // in the entry's order
};

struct MsprobeDump {
  std::string path;  // the dump.json, for messages
  std::string dir;   // the folder holding it (dump_tensor_data/ is there)
  std::string task, level, framework, dump_data_dir;
  std::vector<DumpCall> calls;  // in the file's (the execution) order

  size_t tensors() const;
  // dir/dump_tensor_data/<data_name>.
  std::string tensor_path(const DumpTensor& t) const;
};

// Reads dump.json's text; `path` names it in messages, `dir` is where its tensor files are.
// An Error (exit 2) naming the path and the byte offset (bad JSON) or the field (a wrong entry):
// "d/dump.json: data["Functional.linear.0.forward"].input_args[0]: 'shape' is not a list of
// sizes".
MsprobeDump parse_dump_json(std::string_view text, const std::string& path, const std::string& dir);
MsprobeDump read_dump(const std::string& dump_json_path);

// The folders at or under `root` that hold a dump.json, as msprobe lays them out: root itself (a
// rank folder), root/rank*/ (a step folder) or root/step*/rank*/ (the dump path); relative paths
// ("" for root, "step0/rank1"), sorted with numbers in numeric order. Empty when none.
std::vector<std::string> find_dump_dirs(const std::string& root);

// The tensor summary the dump gives (elements from the shape; std unknown).
TensorStats dump_stats(const DumpTensor& t);

}  // namespace plumb::precision
