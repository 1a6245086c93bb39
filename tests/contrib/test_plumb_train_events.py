"""Tests of contrib/plumb_train_events.py (python3 -m unittest; no torch needed)."""

import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib"))

import plumb_train_events  # noqa: E402
from plumb_train_events import TrainEvents  # noqa: E402


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f.read().splitlines()]


class FakeDevice:
    """Stands for torch.cuda / torch.npu: fixed memory figures, counts the peak resets."""

    def __init__(self):
        self.resets = 0
        self.syncs = 0

    def is_available(self):
        return True

    def memory_allocated(self):
        return 1000

    def memory_reserved(self):
        return 4096

    def max_memory_allocated(self):
        return 3000

    def reset_peak_memory_stats(self):
        self.resets += 1

    def synchronize(self):
        self.syncs += 1


class TrainEventsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "events.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def test_write_gives_one_line_with_the_required_fields(self):
        with TrainEvents(self.path, rank=3, world_size=8, device="3", memory=False) as ev:
            ev.write(12, 1.25, tokens=524288, time_now=1733330000.5)
        self.assertEqual(read_lines(self.path), [{
            "schema": "plumb.train-events/1", "time": 1733330000.5, "step": 12,
            "step_seconds": 1.25, "tokens": 524288, "rank": 3, "world_size": 8, "device": "3"}])

    def test_a_step_block_records_its_operators_and_collectives(self):
        with TrainEvents(self.path, rank=0, memory=False) as ev:
            with ev.step(7, tokens=100) as s:
                s.operator("aten::mm", 0.010)
                s.operator("aten::mm", 0.002)  # the same operator again: summed
                s.collective("allreduce", 1048576, 0.0021, ranks=8, layer="node")
        (line,) = read_lines(self.path)
        self.assertEqual(line["step"], 7)
        self.assertGreater(line["step_seconds"], 0)
        self.assertAlmostEqual(line["operators"]["aten::mm"], 0.012)
        self.assertEqual(line["collectives"], [{"collective": "allreduce", "bytes": 1048576,
                                                "seconds": 0.0021, "ranks": 8, "layer": "node"}])
        self.assertNotIn("memory", line)

    def test_a_step_that_raises_writes_nothing(self):
        with TrainEvents(self.path, memory=False) as ev:
            with self.assertRaises(RuntimeError):
                with ev.step(1):
                    raise RuntimeError("out of memory")
        self.assertEqual(read_lines(self.path), [])

    def test_memory_figures_come_from_the_device_module_and_the_peak_is_per_step(self):
        device = FakeDevice()
        fake_torch = types.SimpleNamespace(cuda=device)
        with mock.patch.dict(sys.modules, {"torch": fake_torch}):
            with TrainEvents(self.path) as ev:
                with ev.step(1):
                    pass
                with ev.step(2):
                    pass
        lines = read_lines(self.path)
        self.assertEqual(lines[1]["memory"], {"allocated_bytes": 1000, "reserved_bytes": 4096,
                                              "peak_bytes": 3000})
        self.assertEqual(device.resets, 2)
        self.assertEqual(device.syncs, 2)

    def test_without_torch_there_are_no_memory_figures(self):
        with mock.patch.dict(sys.modules, {"torch": None}):  # import torch raises ImportError
            self.assertIsNone(plumb_train_events._memory_module())

    def test_lines_are_appended_to_an_existing_file(self):
        with open(self.path, "w") as f:
            f.write('{"schema":"plumb.train-events/1","step":0,"step_seconds":1}\n')
        with TrainEvents(self.path, memory=False) as ev:
            ev.write(1, 2.0)
        self.assertEqual([line["step"] for line in read_lines(self.path)], [0, 1])

    def test_two_writers_sharing_a_file_never_cut_each_others_lines(self):
        a = TrainEvents(self.path, rank=0, memory=False)
        b = TrainEvents(self.path, rank=1, memory=False)
        big = {"op%d" % i: 0.001 for i in range(500)}  # lines of ~8 KB
        for step in range(20):
            a.write(step, 1.0, operators=big)
            b.write(step, 1.0, operators=big)
        a.close()
        b.close()
        lines = read_lines(self.path)
        self.assertEqual(len(lines), 40)
        self.assertEqual(sorted(line["rank"] for line in lines), [0] * 20 + [1] * 20)

    def test_bad_values_are_refused_before_anything_is_written(self):
        with TrainEvents(self.path, memory=False) as ev:
            with self.assertRaisesRegex(ValueError, "step must be a whole number of at least 0"):
                ev.write(-1, 1.0)
            with self.assertRaisesRegex(ValueError, "seconds must be above 0"):
                ev.write(1, 0.0)
            with self.assertRaisesRegex(ValueError, "finite"):
                ev.write(1, float("nan"))
            with ev.step(1) as s:
                with self.assertRaisesRegex(ValueError, "ranks must be a whole number of at least 1"):
                    s.collective("allreduce", 10, 0.1, ranks=0)
                with self.assertRaisesRegex(ValueError, "layer must be one of world, node, rail, spine, got 'dp'"):
                    s.collective("allreduce", 10, 0.1, ranks=2, layer="dp")
        self.assertEqual(len(read_lines(self.path)), 1)  # the step block's own line only


if __name__ == "__main__":
    unittest.main()
