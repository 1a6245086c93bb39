// msprobe's dump.json: the fixture dump (tests/fixtures/precision/msprobe/make_dump.py, written to
// msprobe's documented format) read call by call in the file's order, msprobe's tensor names for
// every nesting, Python's NaN/Infinity words, the rank folders of a dump path, and every
// refusal's exact message.
#include "precision/msprobe_dump.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"

namespace plumb::precision {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(PLUMB_TEST_FIXTURES) + "/precision/msprobe";

std::vector<std::string> keys(const DumpCall& c) {
  std::vector<std::string> out;
  for (const DumpTensor& t : c.tensors) out.push_back(t.key);
  return out;
}

MsprobeDump parse(const std::string& json) { return parse_dump_json(json, "d/dump.json", "d"); }

std::string error_of(const std::string& json) {
  try {
    parse(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A dump.json around one call's entry.
std::string one_call(const std::string& api, const std::string& entry) {
  return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {")" + api +
         R"(": )" + entry + "}}";
}

const std::string kTensor =
    R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.5, "Min": -2, "Mean": 0.25,
        "Norm": 3.0, "requires_grad": true})";

TEST(MsprobeDump, ReadsTheFixtureCallsInTheFilesOrder) {
  const MsprobeDump d = read_dump(kFixtures + "/statistics/npu/step0/rank0/dump.json");
  EXPECT_EQ(d.task, "statistics");
  EXPECT_EQ(d.level, "L1");
  EXPECT_EQ(d.framework, "mindspore");
  EXPECT_EQ(d.dump_data_dir, "");  // null in statistics mode
  ASSERT_EQ(d.calls.size(), 4u);
  // Not sorted: "Mint" would come after "Functional" in a sorted map.
  EXPECT_EQ(d.calls[0].api, "Mint.add.0.forward");
  EXPECT_EQ(d.calls[1].api, "Functional.layer_norm.0.forward");
  EXPECT_EQ(d.calls[2].api, "Functional.linear.0.forward");
  EXPECT_EQ(d.calls[3].api, "Functional.softmax.0.forward");
  EXPECT_EQ(d.tensors(), 13u);
  // layer_norm(h, [16], weight=, bias=, eps=): the int list and eps are not tensors.
  EXPECT_EQ(keys(d.calls[1]), (std::vector<std::string>{
                                  "Functional.layer_norm.0.forward.input.0",
                                  "Functional.layer_norm.0.forward.input.weight",
                                  "Functional.layer_norm.0.forward.input.bias",
                                  "Functional.layer_norm.0.forward.output.0",
                              }));
  const DumpTensor& out = d.calls[1].tensors[3];
  EXPECT_EQ(out.role, PairRole::kOutput);
  EXPECT_EQ(d.calls[1].tensors[1].role, PairRole::kInput);
  EXPECT_EQ(out.dtype, "Float32");
  EXPECT_EQ(out.shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(out.max, 0.1187940388917923);
  EXPECT_EQ(out.min, -0.19312617182731628);
  EXPECT_EQ(out.mean, 0.001384318180498667);
  EXPECT_EQ(out.norm, 0.47115594346416145);
  EXPECT_EQ(out.data_name, "");
  const TensorStats s = dump_stats(out);
  EXPECT_EQ(s.elements, 64u);
  EXPECT_EQ(s.l2norm, 0.47115594346416145);
  EXPECT_TRUE(std::isnan(s.std));
}

TEST(MsprobeDump, TensorModeNamesEachFile) {
  const std::string dir = kFixtures + "/tensor/gpu/step0/rank0";
  const MsprobeDump d = read_dump(dir + "/dump.json");
  EXPECT_EQ(d.task, "tensor");
  EXPECT_EQ(d.dump_data_dir, "/home/dump/gpu/step0/rank0/dump_tensor_data");
  const DumpTensor& out = d.calls[1].tensors[3];
  EXPECT_EQ(out.data_name, "Functional.layer_norm.0.forward.output.0.npy");
  EXPECT_EQ(d.tensor_path(out), dir + "/dump_tensor_data/Functional.layer_norm.0.forward.output.0.npy");
  EXPECT_TRUE(fs::exists(d.tensor_path(out)));
}

TEST(MsprobeDump, NamesTensorsAsMsprobeCompareDoes) {
  // Nested lists and mappings, a null that keeps its index, values that are not tensors, a single
  // output not in a list, parameters (L0), and backward's input/output.
  const std::string json = R"({"task": "statistics", "data": {
      "Module.fc.Linear.forward.0": {
        "input_args": [)" + kTensor + R"(, null, [)" + kTensor + "," + kTensor + R"(], {"type": "int", "value": 3}],
        "input_kwargs": {"scale": )" + kTensor + R"(, "opts": {"w": )" + kTensor + R"(}},
        "parameters": {"weight": )" + kTensor + R"(, "bias": )" + kTensor + R"(},
        "output": )" + kTensor + R"(},
      "Module.fc.Linear.backward.0": {"input": [)" + kTensor + R"(], "output": [)" + kTensor + R"(, null]},
      "Module.fc.Linear.parameters_grad.0": {"weight": [)" + kTensor + R"(], "bias": [)" + kTensor + R"(]}}})";
  const MsprobeDump d = parse(json);
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(keys(d.calls[0]), (std::vector<std::string>{
                                  "Module.fc.Linear.forward.0.input.0",
                                  "Module.fc.Linear.forward.0.input.2.0",
                                  "Module.fc.Linear.forward.0.input.2.1",
                                  "Module.fc.Linear.forward.0.input.scale",
                                  "Module.fc.Linear.forward.0.input.opts.w",
                                  "Module.fc.Linear.forward.0.parameters.weight",
                                  "Module.fc.Linear.forward.0.parameters.bias",
                                  "Module.fc.Linear.forward.0.output.0",
                              }));
  EXPECT_EQ(d.calls[0].tensors[5].role, PairRole::kParameter);
  EXPECT_EQ(d.calls[0].tensors[7].role, PairRole::kOutput);
  EXPECT_EQ(keys(d.calls[1]), (std::vector<std::string>{"Module.fc.Linear.backward.0.input.0",
                                                        "Module.fc.Linear.backward.0.output.0"}));
  EXPECT_EQ(d.calls[1].tensors[0].role, PairRole::kInput);
  EXPECT_EQ(keys(d.calls[2]), (std::vector<std::string>{"Module.fc.Linear.parameters_grad.0.weight",
                                                        "Module.fc.Linear.parameters_grad.0.bias"}));
  EXPECT_EQ(d.calls[2].tensors[0].role, PairRole::kParameter);
  const DumpTensor& t = d.calls[0].tensors[0];
  EXPECT_EQ(t.dtype, "torch.float32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.max, 1.5);
  EXPECT_EQ(t.min, -2.0);
  EXPECT_EQ(t.mean, 0.25);
  EXPECT_EQ(t.norm, 3.0);
}

TEST(MsprobeDump, ReadsPythonsNanAndInfinityWords) {
  const MsprobeDump d = parse(one_call("Tensor.div.0.forward", R"({"output": [{"type": "torch.Tensor",
      "dtype": "torch.float16", "shape": [], "Max": Infinity, "Min": -Infinity, "Mean": NaN, "Norm": "inf",
      "data_name": "-1"}, {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [0], "Max": null}]})"));
  const DumpTensor& t = d.calls[0].tensors[0];
  EXPECT_EQ(t.max, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.min, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(t.mean.has_value());
  EXPECT_TRUE(std::isnan(*t.mean));
  EXPECT_EQ(t.norm, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.data_name, "");  // msprobe's "-1": no file
  EXPECT_TRUE(t.shape.empty());
  const DumpTensor& empty = d.calls[0].tensors[1];
  EXPECT_FALSE(empty.max.has_value());
  EXPECT_FALSE(empty.min.has_value());
  EXPECT_EQ(dump_stats(empty).elements, 0u);
  EXPECT_TRUE(std::isnan(dump_stats(empty).max));
}

TEST(MsprobeDump, RefusesBadInputWithOneLine) {
  // The byte offset (from 0) is in the file as written: the quotes added around NaN do not count;
  // at the end of the input it is the size.
  EXPECT_EQ(error_of(R"({"task": "tensor", "x": NaN, "data": {]})"),
            "d/dump.json: not valid JSON at byte 38: syntax error while parsing object key - unexpected ']'; "
            "expected string literal");
  EXPECT_EQ(error_of(R"({"task": "tensor", "data": {)"),
            "d/dump.json: not valid JSON at byte 28: syntax error while parsing object key - unexpected end of "
            "input; expected string literal");
  EXPECT_EQ(error_of("[1, 2]"),
            "d/dump.json: the top level is not a JSON object (msprobe's dump.json holds task, level, framework and "
            "data)");
  EXPECT_EQ(error_of(R"({"data": {}})"), "d/dump.json: 'task' is missing");
  EXPECT_EQ(error_of(R"({"task": 3, "data": {}})"), "d/dump.json: 'task' is not a string");
  EXPECT_EQ(error_of(R"({"task": "tensor", "data": []})"),
            "d/dump.json: 'data' is missing or not an object (msprobe's dump.json maps each API call to its "
            "tensors there)");
  EXPECT_EQ(error_of(R"({"task": "tensor", "data": {"A.x.0.forward": {}, "A.x.0.forward": {}}})"),
            "d/dump.json: data[\"A.x.0.forward\"]: the call appears twice");
  EXPECT_EQ(error_of(R"({"task": "tensor", "data": {"A.x.0.forward": [1]}})"),
            "d/dump.json: data[\"A.x.0.forward\"]: is not an object");
  EXPECT_EQ(error_of(one_call("A.x.0.forward", R"({"output": [{"type": "t", "dtype": "f", "shape": [2, -1]}]})")),
            "d/dump.json: data[\"A.x.0.forward\"].output[0]: 'shape' is not a list of sizes");
  EXPECT_EQ(error_of(one_call("A.x.0.forward", R"({"output": [{"type": "t", "dtype": "f", "shape": 4}]})")),
            "d/dump.json: data[\"A.x.0.forward\"].output[0]: 'shape' is not a list of sizes");
  EXPECT_EQ(error_of(one_call("A.x.0.forward", R"({"output": [{"type": "t", "dtype": 1, "shape": [4]}]})")),
            "d/dump.json: data[\"A.x.0.forward\"].output[0]: 'dtype' is not a string");
  EXPECT_EQ(error_of(one_call("A.x.0.forward",
                              R"({"input_kwargs": {"w": {"type": "t", "dtype": "f", "shape": [4], "Max": "big"}}})")),
            "d/dump.json: data[\"A.x.0.forward\"].input_kwargs.w: 'Max' is not a number");
  EXPECT_EQ(error_of(one_call("A.x.0.forward", R"({"output": [{"type": "t", "dtype": "f", "shape": [4],
                                                   "data_name": "../../etc/passwd"}]})")),
            "d/dump.json: data[\"A.x.0.forward\"].output[0]: 'data_name' is \"../../etc/passwd\", not a file name "
            "under dump_tensor_data");
  EXPECT_EQ(error_of(one_call("A.x.0.forward", R"({"input_args": [)" + kTensor + R"(], "input": [)" + kTensor +
                                                   "]}")),
            "d/dump.json: data[\"A.x.0.forward\"].input[0]: a second tensor named \"A.x.0.forward.input.0\"");
  EXPECT_EQ(error_of(std::string(100, '[') + std::string(100, ']')),
            "d/dump.json: values nested deeper than 64 levels");
}

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "{}";
}

TEST(MsprobeDump, FindsRankFoldersAtEachLevelInNumericOrder) {
  const fs::path root = fs::path(PLUMB_TEST_TMP) / "msprobe_find";
  fs::remove_all(root);
  for (const char* rank : {"rank0", "rank10", "rank2", "rank1"}) touch(root / "step0" / rank / "dump.json");
  touch(root / "step1" / "rank0" / "dump.json");
  fs::create_directories(root / "step1" / "proc123");  // no dump.json: not a rank folder
  EXPECT_EQ(find_dump_dirs(root.string()), (std::vector<std::string>{"step0/rank0", "step0/rank1", "step0/rank2",
                                                                      "step0/rank10", "step1/rank0"}));
  EXPECT_EQ(find_dump_dirs((root / "step0").string()),
            (std::vector<std::string>{"rank0", "rank1", "rank2", "rank10"}));
  EXPECT_EQ(find_dump_dirs((root / "step0" / "rank2").string()), (std::vector<std::string>{""}));
  EXPECT_TRUE(find_dump_dirs((root / "step1" / "proc123").string()).empty());
  EXPECT_TRUE(find_dump_dirs((root / "absent").string()).empty());
}

}  // namespace
}  // namespace plumb::precision
