// Issue 28: every reader of JSON or YAML given a document nested far deeper than any real one —
// 100,000 levels, or a YAML alias that contains itself — answers with one message naming the
// file (or the line, or the request) and the limit, never a crash. The limits: kMaxJsonDepth
// (common/json.h) and kMaxYamlDepth (common/yaml_strict.h), docs/outputs.md "Limits on input".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "baseline/importers/importer.h"
#include "baseline/record_json.h"
#include "comm/cluster_map.h"
#include "common/error.h"
#include "common/json.h"
#include "common/yaml_strict.h"
#include "exporter/alertmanager_webhook.h"
#include "exporter/train_events.h"
#include "mem/input.h"
#include "mem/jsonl_reader.h"
#include "mem/snapshot_reader.h"
#include "mem/stats_reader.h"
#include "plan/hardware.h"
#include "plan/model.h"
#include "plan/validation_set.h"
#include "precision/readers.h"
#include "step/readers.h"
#include "supervise/checkpoint_manifest.h"
#include "support/subprocess.h"
#include "topo/site_topology.h"

namespace plumb {
namespace {

constexpr int kDeep = 100000;

// `depth` arrays, one inside the other.
std::string arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The JSON depth message for a document whose first bracket is at byte `first` and whose
// brackets all open one level each: the 513th is 512 bytes further.
std::string json_too_deep_at(size_t first) {
  return "JSON nested deeper than 512 levels (at byte " + std::to_string(first + kMaxJsonDepth) + ")";
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir("deep-input") + "/" + name;
  test::write_file(path, text);
  return path;
}

TEST(DeepJson, RecordFile) {
  const std::string prefix = R"({"schema": "plumb.comm/1", "results": )";
  const std::string path = temp_file("record.json", prefix + arrays(kDeep) + "}");
  // '{' is the first level: the 513th bracket is the 512th '['.
  EXPECT_EQ(error_of([&] { baseline::read_record_file(path); }),
            path + ": " + json_too_deep_at(prefix.size() - 1));
}

TEST(DeepJson, NcclTestsJsonImport) {
  const std::string text = R"({"args": )" + arrays(kDeep) + "}";
  EXPECT_EQ(error_of([&] { baseline::nccl_tests_json_importer().parse(text, "run.json", {}); }),
            "run.json: " + json_too_deep_at(8));
}

TEST(DeepJson, AlertmanagerWebhookPayload) {
  EXPECT_EQ(error_of([&] { exporter::parse_alertmanager_webhook(arrays(kDeep)); }),
            "Alertmanager webhook payload: " + json_too_deep_at(0));
}

TEST(DeepJson, TrainEventsLine) {
  EXPECT_EQ(error_of([&] { exporter::parse_train_event(R"({"step": 1, "x": )" + arrays(kDeep) + "}"); }),
            json_too_deep_at(16));
}

TEST(DeepJson, CheckpointManifest) {
  const std::string dir = test::temp_dir("deep-manifest");
  test::write_file(dir + "/plumb-checkpoint.json", arrays(kDeep));
  EXPECT_EQ(supervise::read_manifest(dir, "run_1/").problem,
            "run_1/plumb-checkpoint.json: " + json_too_deep_at(0));
}

TEST(DeepJson, KubernetesNodeList) {
  EXPECT_EQ(error_of([&] { topo::parse_k8s_nodes(R"({"items": )" + arrays(kDeep) + "}", "nodes.json"); }),
            "nodes.json: " + json_too_deep_at(9));
}

TEST(DeepJson, SafetensorsHeader) {
  const std::string header = R"({"t": )" + arrays(kDeep) + "}";
  std::string bytes(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  const std::string path = temp_file("deep.safetensors", bytes + header);
  // The message counts bytes from the file's start: the header begins after its 8-byte length.
  EXPECT_EQ(error_of([&] { precision::read_tensors(path); }),
            path + ": header at byte 8: " + json_too_deep_at(8 + 5));
}

TEST(DeepJson, MemoryEventLinesAndStatsDumps) {
  EXPECT_EQ(error_of([&] { mem::parse_events_jsonl("\n" + arrays(kDeep) + "\n", "run.jsonl"); }),
            "run.jsonl:2: " + json_too_deep_at(0));
  EXPECT_EQ(error_of([&] { mem::parse_memory_stats(arrays(kDeep) + "\n", "stats.jsonl"); }),
            "stats.jsonl:1: " + json_too_deep_at(0));
}

// The snapshot's JSON form is streamed through nlohmann's SAX interface, whatever its size: the
// depth is counted as it is read.
TEST(DeepJson, MemorySnapshotStream) {
  const std::string text = R"({"segments": [], "device_traces": )" + arrays(kDeep) + "}";
  EXPECT_EQ(error_of([&] { mem::read_trace(mem::input_from_string(text, "snap.json"), 0); }),
            "snap.json: JSON nested deeper than 512 levels");
}

// Kineto traces are read with simdjson On-Demand: a value the reader does not look into is
// skipped without recursion, whatever its depth; one it reads must have the shape it expects.
TEST(DeepJson, KinetoTrace) {
  const std::string skipped =
      temp_file("rank-0.json", R"({"traceEvents": [{"ph": "X", "args": )" + arrays(kDeep) + "}]}");
  EXPECT_EQ(error_of([&] { step::read_kineto(skipped, {}); }), "no error");
  const std::string path =
      temp_file("rank-1.json", R"({"traceEvents": [{"ph": "X", "name": )" + arrays(kDeep) + "}]}");
  EXPECT_EQ(error_of([&] { step::read_kineto(path, {}); }),
            path + ": byte 37: expected a string for \"name\"");
}

std::string flow(int depth) { return std::string(depth, '[') + std::string(depth, ']') + "\n"; }

// yaml-cpp 0.7 stops at 500 levels itself ("bad file"); plumb says what it is.
TEST(DeepYaml, ParserLimitIsNamed) {
  EXPECT_EQ(error_of([&] { load_yaml(flow(kDeep), "x.yaml"); }),
            "x.yaml: YAML nested deeper than 256 levels");
  // Deeper than plumb's limit, within yaml-cpp's: the line of the first node too deep.
  EXPECT_EQ(error_of([&] { load_yaml("a:\n  b: " + flow(300), "x.yaml"); }),
            "x.yaml:2: YAML nested deeper than 256 levels");
  EXPECT_NO_THROW(load_yaml(flow(kMaxYamlDepth), "x.yaml"));
}

// An alias inside the node it names: a cycle, infinitely deep to anything that walks it.
TEST(DeepYaml, AliasCycleAndAliasBomb) {
  EXPECT_EQ(error_of([&] { load_yaml("racks: &a [*a]\n", "map.yaml"); }),
            "map.yaml:1: YAML nested deeper than 256 levels");
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n",
                        c, static_cast<char>(c - 1));
  }
  EXPECT_EQ(error_of([&] { load_yaml(bomb, "map.yaml"); }),
            "map.yaml: YAML aliases expand to more than 1048576 nodes");
  EXPECT_EQ(error_of([&] { load_yaml_documents("a: 1\n---\nb: &b {c: *b}\n", "hn.yaml"); }),
            "hn.yaml:3: YAML nested deeper than 256 levels");
}

TEST(DeepYaml, EveryYamlReader) {
  const std::string deep = "racks: " + flow(kDeep);
  EXPECT_EQ(error_of([&] { comm::parse_cluster_map(deep, "map.yaml"); }),
            "map.yaml: YAML nested deeper than 256 levels");
  EXPECT_EQ(error_of([&] { topo::read_hypernodes(deep, "hn.yaml", {}); }),
            "hn.yaml: YAML nested deeper than 256 levels");
  EXPECT_EQ(error_of([&] { plan::run_set_from_text(deep, "set.yaml"); }),
            "set.yaml: YAML nested deeper than 256 levels");
  const std::string model = temp_file("model.yaml", "name: " + flow(kDeep));
  EXPECT_EQ(error_of([&] { plan::load_model(model); }),
            model + ": YAML nested deeper than 256 levels");
  const std::string hardware = temp_file("hw.yaml", "name: &n [*n]\n");
  EXPECT_EQ(error_of([&] { plan::load_hardware(hardware); }),
            hardware + ":1: YAML nested deeper than 256 levels");
}

}  // namespace
}  // namespace plumb
