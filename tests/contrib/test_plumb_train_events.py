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
from plumb_train_events import PlumbJob, TrainEvents, parse_profile_steps  # noqa: E402


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


class CheckpointFieldTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "events.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def test_only_the_first_line_after_a_save_or_load_carries_it(self):
        with TrainEvents(self.path, memory=False) as ev:
            ev.checkpoint("loaded")
            ev.write(11, 1.0)
            ev.write(12, 1.0)
            ev.checkpoint("saved")
            ev.write(13, 1.0)
        self.assertEqual([line.get("checkpoint") for line in read_lines(self.path)],
                         ["loaded", None, "saved"])

    def test_other_values_are_refused(self):
        with TrainEvents(self.path, memory=False) as ev:
            with self.assertRaises(ValueError) as e:
                ev.checkpoint("save")
        self.assertEqual(str(e.exception), "checkpoint must be one of saved, loaded, got 'save'")


class ProcessMemoryTest(unittest.TestCase):
    """CPU: the process's VmRSS, and VmHWM only once clear_refs reset it (a fake /proc here)."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        with open(os.path.join(self.dir.name, "status"), "w") as f:
            f.write("Name:\tpython3\nVmHWM:\t  300000 kB\nVmRSS:\t  200000 kB\n")

    def tearDown(self):
        self.dir.cleanup()

    def test_rss_is_allocated_and_reserved_and_the_peak_needs_a_reset(self):
        memory = plumb_train_events._ProcessMemory(self.dir.name)
        self.assertEqual(memory.figures(), {"allocated_bytes": 204800000, "reserved_bytes": 204800000})
        memory.reset_peak()  # writes "5" to clear_refs
        with open(os.path.join(self.dir.name, "clear_refs")) as f:
            self.assertEqual(f.read(), "5")
        self.assertEqual(memory.figures()["peak_bytes"], 307200000)

    def test_a_peak_that_could_not_be_reset_is_left_out(self):
        memory = plumb_train_events._ProcessMemory(os.path.join(self.dir.name, "missing"))
        memory.reset_peak()
        self.assertIsNone(memory.figures())

    def test_without_a_device_the_source_is_the_process(self):
        with mock.patch.dict(sys.modules, {"torch": None}):
            self.assertIsInstance(plumb_train_events._memory_source(), plumb_train_events._ProcessMemory)


class JobContractTest(unittest.TestCase):
    """PlumbJob's reading of the PLUMB_* variables (docs/baseline.md, "The job contract")."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "events.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def error(self, env):
        with self.assertRaises(ValueError) as e:
            PlumbJob(env=env)
        return str(e.exception)

    def test_profile_steps_is_start_colon_count(self):
        self.assertEqual(parse_profile_steps("10:3"), (10, 3))
        self.assertEqual(parse_profile_steps("0:1"), (0, 1))

    def test_a_bad_profile_window_names_the_variable(self):
        expected = ("PLUMB_PROFILE_STEPS=%r: expected START:COUNT, the first step to profile (0 or "
                    "more) and how many steps (1 or more), e.g. 10:3")
        for bad in ("10", "10-3", "a:3", "10:0", "-1:3", "1:2:3", ":", "10:3.5"):
            self.assertEqual(self.error({"PLUMB_PROFILE_STEPS": bad, "PLUMB_TRACE_DIR": "t"}),
                             expected % bad)

    def test_a_profile_window_needs_a_trace_dir(self):
        self.assertEqual(self.error({"PLUMB_PROFILE_STEPS": "2:2"}),
                         "PLUMB_PROFILE_STEPS='2:2' is set but PLUMB_TRACE_DIR is not: the traces need a folder")

    def test_bad_whole_numbers_name_their_variable(self):
        self.assertEqual(self.error({"PLUMB_MAX_STEPS": "0"}),
                         "PLUMB_MAX_STEPS='0': expected a whole number of at least 1")
        self.assertEqual(self.error({"PLUMB_RESUME_STEP": "ten"}),
                         "PLUMB_RESUME_STEP='ten': expected a whole number of at least 0")
        self.assertEqual(self.error({"PLUMB_RESTART": "-1"}),
                         "PLUMB_RESTART='-1': expected a whole number of at least 0")

    def test_resume_variables_and_max_steps(self):
        job = PlumbJob(env={"PLUMB_RESUME_FROM": "/ck/step_0000010", "PLUMB_RESUME_STEP": "10",
                            "PLUMB_RESTART": "2", "PLUMB_MAX_STEPS": "12", "RANK": "3"})
        self.assertEqual((job.resume_from, job.resume_step, job.restart, job.rank),
                         ("/ck/step_0000010", 10, 2, 3))
        self.assertEqual(list(job.steps(11, 100)), [11, 12])
        first = PlumbJob(env={})
        self.assertEqual((first.resume_from, first.resume_step, first.restart, first.max_steps),
                         (None, None, 0, None))
        self.assertEqual(list(first.steps(1, 3)), [1, 2, 3])

    def test_the_rank_comes_from_mpirun_or_srun_too(self):
        self.assertEqual(PlumbJob(env={"OMPI_COMM_WORLD_RANK": "5"}).rank, 5)
        self.assertEqual(PlumbJob(env={"SLURM_PROCID": "7"}).rank, 7)
        self.assertEqual(PlumbJob(rank=1, env={"RANK": "4"}).rank, 1)

    def test_lines_go_to_plumb_train_events_with_the_checkpoint_marks(self):
        with PlumbJob(rank=0, world_size=2, env={"PLUMB_TRAIN_EVENTS": self.path}) as job:
            job.checkpoint_loaded()
            for step in job.steps(5, 6):
                with job.step(step, tokens=64):
                    pass
                job.checkpoint_saved()
        lines = read_lines(self.path)
        self.assertEqual([(e["step"], e["rank"], e["world_size"], e.get("checkpoint")) for e in lines],
                         [(5, 0, 2, "loaded"), (6, 0, 2, "saved")])

    def test_without_plumb_train_events_nothing_is_written(self):
        with PlumbJob(env={}) as job:
            with job.step(1):
                pass
        self.assertEqual(os.listdir(self.dir.name), [])
        self.assertEqual(job.written, [])


if __name__ == "__main__":
    unittest.main()
