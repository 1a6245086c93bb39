// One plumb.train-events/1 line: the fields read, the busbw worked examples (nccl-tests bus
// factors, docs/train-events.md) and the exact message for each kind of malformed line.
#include "exporter/train_events.h"

#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const std::string kExample =
    R"({"schema":"plumb.train-events/1","time":1733330000.5,"step":12,"step_seconds":1.23,)"
    R"("tokens":524288,"rank":0,"world_size":8,"device":"0","memory":{"allocated_bytes":1000,)"
    R"("reserved_bytes":2000,"peak_bytes":1500},"operators":{"aten::mm":0.012},)"
    R"("collectives":[{"collective":"allreduce","bytes":1048576,"seconds":0.0021,"ranks":8,)"
    R"("layer":"node"}]})";

std::string problem(const std::string& line) {
  return plumb::test::error_message([&] { parse_train_event(line); });
}

TEST(TrainEvent, ReadsEveryFieldOfTheExample) {
  const TrainEvent e = parse_train_event(kExample);
  EXPECT_EQ(e.step, 12);
  EXPECT_EQ(e.step_seconds, 1.23);
  EXPECT_EQ(e.time, 1733330000.5);
  EXPECT_EQ(e.tokens, 524288.0);
  EXPECT_EQ(e.rank, "0");
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.device, "0");
  EXPECT_EQ(e.allocated_bytes, 1000.0);
  EXPECT_EQ(e.reserved_bytes, 2000.0);
  EXPECT_EQ(e.peak_bytes, 1500.0);
  ASSERT_EQ(e.operators.size(), 1u);
  EXPECT_EQ(e.operators[0].first, "aten::mm");
  EXPECT_EQ(e.operators[0].second, 0.012);
  ASSERT_EQ(e.collectives.size(), 1u);
  EXPECT_EQ(e.collectives[0].collective, "allreduce");
  EXPECT_EQ(e.collectives[0].layer, "node");
  EXPECT_EQ(e.collectives[0].bytes, 1048576u);
  EXPECT_EQ(e.collectives[0].ranks, 8);
}

TEST(TrainEvent, OnlySchemaStepAndStepSecondsAreRequired) {
  const TrainEvent e =
      parse_train_event(R"({"schema":"plumb.train-events/1","step":0,"step_seconds":2})");
  EXPECT_EQ(e.step, 0);
  EXPECT_EQ(e.rank, "");
  EXPECT_FALSE(e.tokens.has_value());
  EXPECT_FALSE(e.allocated_bytes.has_value());
  EXPECT_TRUE(e.collectives.empty());
}

// allreduce: busbw = bytes / seconds × 2(n-1)/n. 1 MiB in 2.1 ms over 8 ranks:
// 1048576 / 0.0021 = 499321904.76 B/s algbw, × 1.75 = 873813333.33 B/s.
TEST(TrainEvent, AllreduceBusbwIsTheNcclTestsFormula) {
  const TrainEvent e = parse_train_event(kExample);
  EXPECT_NEAR(e.collectives[0].busbw_bytes_per_second, 873813333.333, 1e-3);
}

// allgather: × (n-1)/n. 8 MiB in 4 ms over 4 ranks: 2097152000 × 0.75 = 1572864000 B/s.
// The layer defaults to "world"; nccl-tests' spelling all_gather is accepted.
TEST(TrainEvent, AllgatherBusbwAndTheDefaultLayer) {
  const TrainEvent e = parse_train_event(
      R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1,"collectives":[)"
      R"({"collective":"all_gather","bytes":8388608,"seconds":0.004,"ranks":4}]})");
  ASSERT_EQ(e.collectives.size(), 1u);
  EXPECT_EQ(e.collectives[0].collective, "allgather");
  EXPECT_EQ(e.collectives[0].layer, "world");
  EXPECT_DOUBLE_EQ(e.collectives[0].busbw_bytes_per_second, 1572864000.0);
}

TEST(TrainEvent, MalformedLinesSayWhatIsWrong) {
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":"12","step_seconds":1})"),
            "'step' is a string, expected a whole number from 0 to 9007199254740992");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1.5,"step_seconds":1})"),
            "'step' is '1.5', expected a whole number from 0 to 9007199254740992");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1})"),
            "no 'step_seconds' (required)");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1,"step_seconds":0})"),
            "'step_seconds' is '0', expected a number from 1e-07 to 604800");
  EXPECT_EQ(problem(R"({"schema":"plumb.mem-events/1","step":1,"step_seconds":1})"),
            "'schema' is 'plumb.mem-events/1', expected 'plumb.train-events/1'");
  EXPECT_EQ(problem(R"({"step":1,"step_seconds":1})"), "no 'schema' (required)");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1,"st)"),
            "not valid JSON: parse error at line 1, column 46: syntax error while parsing object "
            "key - invalid string: missing closing quote; last read: '\"st'; expected string "
            "literal");  // the end of the 45-byte line
  EXPECT_EQ(problem("[1,2]"), "'the line' is an array, expected a JSON object");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1,)"
                    R"("memory":{"peak_bytes":-1}})"),
            "'memory.peak_bytes' is '-1', expected a number from 0 to 1125899906842624");
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1,)"
                    R"("operators":{"aten::mm":"fast"}})"),
            "'operators.aten::mm' is a string, expected a number from 0 to 604800");
  // Found by fuzzing: a number beyond a double threw out of the parser (nlohmann's out_of_range).
  EXPECT_EQ(problem(R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1e999})"),
            "not valid JSON: number overflow parsing '1e999'");
}

// Issue 29: "checkpoint" marks the first line after a save or a load finished, for the memory
// baseline's checkpoint check; only the two words are accepted.
TEST(TrainEvent, CheckpointSavedOrLoaded) {
  const std::string head = R"({"schema":"plumb.train-events/1","step":5,"step_seconds":1,)";
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":"saved"})").checkpoint, "saved");
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":"loaded"})").checkpoint, "loaded");
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":null})").checkpoint, "");
  EXPECT_EQ(parse_train_event(kExample).checkpoint, "");
  EXPECT_EQ(problem(head + R"("checkpoint":"save"})"),
            "'checkpoint' is 'save', expected 'saved' or 'loaded'");
  EXPECT_EQ(problem(head + R"("checkpoint":true})"),
            "'checkpoint' is a boolean, expected 'saved' or 'loaded'");
  EXPECT_EQ(problem(head + R"("checkpoint":1})"),
            "'checkpoint' is '1', expected 'saved' or 'loaded'");
}

TEST(TrainEvent, ABadCollectiveIsNamedByItsPosition) {
  const std::string head = R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1,)";
  EXPECT_EQ(problem(head + R"("collectives":[{"collective":"allreduce","bytes":1,"seconds":1,)"
                           R"("ranks":2},{"collective":"allreduce","bytes":1,"seconds":1}]})"),
            "no 'collectives[1].ranks' (required)");
  EXPECT_EQ(problem(head + R"("collectives":[{"collective":"allreduce","bytes":1,"seconds":0,)"
                           R"("ranks":2}]})"),
            "'collectives[0].seconds' is '0', expected a number from 1e-07 to 86400");
  EXPECT_EQ(problem(head + R"("collectives":[{"collective":"alreduce","bytes":1,"seconds":1,)"
                           R"("ranks":2}]})")
                .substr(0, 60),
            "'collectives[0].collective': unknown collective 'alreduce' (");
}

// Issue 28: a collective of 1 MiB in 1e-300 s gave a busbw of 1.8e306 B/s, which kept the
// bandwidth-low alert quiet. Values no measurement can be make the line malformed
// (value_bounds.h), each with its message.
TEST(TrainEvent, PhysicallyImpossibleCollectivesAreMalformed) {
  const std::string head = R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1,)";
  const auto collective = [&](const std::string& fields) {
    return problem(head + R"("collectives":[{"collective":"allreduce",)" + fields + "}]}");
  };
  EXPECT_EQ(collective(R"("bytes":1048576,"seconds":1e-300,"ranks":8)"),
            "'collectives[0].seconds' is '1e-300', expected a number from 1e-07 to 86400");
  EXPECT_EQ(collective(R"("bytes":1048576,"seconds":1e6,"ranks":8)"),
            "'collectives[0].seconds' is '1000000.0', expected a number from 1e-07 to 86400");
  // 1 GiB in 1 µs over 8 ranks: 1.07e15 B/s algbw, × 1.75.
  EXPECT_EQ(collective(R"("bytes":1073741824,"seconds":1e-6,"ranks":8)"),
            "'collectives[0]': 1073741824 bytes in 1e-06 s over 8 ranks is a busbw of 1.88e+15 "
            "B/s (algbw 1.07e+15 B/s), above the 1e+14 B/s no link or memory reaches");
  // One rank: busbw 0, but 1e+20 B/s of algbw is no copy either.
  EXPECT_EQ(collective(R"("bytes":10000000000000,"seconds":1e-7,"ranks":1)"),
            "'collectives[0]': 10000000000000 bytes in 1e-07 s over 1 ranks is a busbw of 0 B/s "
            "(algbw 1e+20 B/s), above the 1e+14 B/s no link or memory reaches");
  EXPECT_EQ(collective(R"("bytes":2251799813685248,"seconds":1,"ranks":8)"),
            "'collectives[0].bytes' is '2251799813685248', expected a whole number from 0 to "
            "1125899906842624");
  EXPECT_EQ(collective(R"("bytes":1,"seconds":1,"ranks":2000000000)"),
            "'collectives[0].ranks' is '2000000000', expected a whole number from 1 to 1048576");
  EXPECT_EQ(collective(R"("bytes":1,"seconds":1,"ranks":8,"layer":"fabric")"),
            "'collectives[0].layer': unknown layer 'fabric'; expected one of world, node, rail, "
            "spine");
  EXPECT_EQ(collective(R"("bytes":1,"seconds":1,"ranks":8,"layer":"nodes")"),
            "'collectives[0].layer': unknown layer 'nodes' (did you mean 'node'?); expected one of "
            "world, node, rail, spine");
  // The fastest real figures pass: 16 GiB in 20 ms over 72 ranks (859 GB/s algbw, NVL72-like).
  EXPECT_NO_THROW(parse_train_event(
      head + R"("collectives":[{"collective":"allreduce","bytes":17179869184,"seconds":0.02,)"
             R"("ranks":72,"layer":"node"}]})"));
}

TEST(TrainEvent, DurationsAndSizesOutOfRangeAreMalformed) {
  const std::string head = R"({"schema":"plumb.train-events/1",)";
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1e-300})"),
            "'step_seconds' is '1e-300', expected a number from 1e-07 to 604800");
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1e300})"),
            "'step_seconds' is '1e+300', expected a number from 1e-07 to 604800");
  EXPECT_EQ(problem(head + R"("step":9007199254740993,"step_seconds":1})"),
            "'step' is '9007199254740993', expected a whole number from 0 to 9007199254740992");
  EXPECT_EQ(problem(head + R"("step":18446744073709551615,"step_seconds":1})"),
            "'step' is '18446744073709551615', expected a whole number from 0 to "
            "9007199254740992");
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1,"tokens":1e300})"),
            "'tokens' is '1e+300', expected a number from 0 to 1000000000000");
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1,"world_size":0})"),
            "'world_size' is '0', expected a whole number from 1 to 1048576");
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1,"memory":{"allocated_bytes":1e300}})"),
            "'memory.allocated_bytes' is '1e+300', expected a number from 0 to 1125899906842624");
  EXPECT_EQ(problem(head + R"("step":1,"step_seconds":1,"operators":{"mm":1e9}})"),
            "'operators.mm' is '1000000000.0', expected a number from 0 to 604800");
}

// Issue 29: "checkpoint" marks the first line after a save or a load finished; any other value is
// malformed, absent (or null) is "".
TEST(TrainEvent, CheckpointMarksSavedOrLoaded) {
  const std::string head = R"({"schema":"plumb.train-events/1","step":3,"step_seconds":1,)";
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":"saved"})").checkpoint, "saved");
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":"loaded"})").checkpoint, "loaded");
  EXPECT_EQ(parse_train_event(head + R"("checkpoint":null})").checkpoint, "");
  EXPECT_EQ(parse_train_event(kExample).checkpoint, "");
  EXPECT_EQ(problem(head + R"("checkpoint":"written"})"),
            "'checkpoint' is 'written', expected 'saved' or 'loaded'");
  EXPECT_EQ(problem(head + R"("checkpoint":true})"),
            "'checkpoint' is a boolean, expected 'saved' or 'loaded'");
}

}  // namespace
}  // namespace plumb::exporter
