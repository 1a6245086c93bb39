"""End to end: the reference workload (real PyTorch, 2 gloo ranks) under the real `plumb run`.

    python3 reference_workload_e2e.py PLUMB_BINARY

One drilled run: the job contract's variables set, a real SIGKILL after a checkpoint, a restart
that gets PLUMB_RESUME_FROM from plumb and resumes right after that checkpoint, PLUMB_MAX_STEPS
ending it. Then the leak variant, whose resident-memory creep per step must be the leak's size.
Needs Debian's python3-torch (scripts/install-deps); the workload runs under the first of this
interpreter and /usr/bin/python3 that imports torch. Exit 0 when every check holds.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "..", "..", "contrib", "reference_workload.py")
PLUMB = None  # the binary under test (argv[1])

MIB = 1 << 20
MAX_STEPS = 13       # PLUMB_MAX_STEPS: the run ends after this step although --steps is larger
EVERY = 4            # --checkpoint-every
PROFILE = (2, 2)     # PLUMB_PROFILE_STEPS=2:2 → ProfilerStep#2 and #3
LEAK_MIB = 16        # --leak-mb-per-step of the leak variant
LEAK_STEPS = 10
LEAK_TOLERANCE = 0.2  # the "within 20% of the leak the script makes"


def torch_python():
    for python in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([python, "-c", "import torch.distributed"], capture_output=True).returncode == 0:
            return python
    sys.exit("reference_workload_e2e: no python3 here imports torch: install python3-torch "
             "(scripts/install-deps)")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def by_rank(lines):
    out = {}
    for line in lines:
        out.setdefault(line["rank"], []).append(line)
    return out


def slope(xs, ys):
    """Least-squares slope of ys over xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


class DrilledRun(unittest.TestCase):
    """One `plumb run --drill 1 --drill-faults kill` of the workload, checked from every side."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.events, cls.run_events = os.path.join(d, "train.jsonl"), os.path.join(d, "run.jsonl")
        cls.traces, cls.ckpt = os.path.join(d, "traces"), os.path.join(d, "ckpt")
        env = dict(os.environ, PLUMB_TRAIN_EVENTS=cls.events, PLUMB_TRACE_DIR=cls.traces,
                   PLUMB_PROFILE_STEPS="%d:%d" % PROFILE, PLUMB_MAX_STEPS=str(MAX_STEPS))
        env.pop("MASTER_PORT", None)  # --nproc picks a free port for each attempt
        cmd = [PLUMB, "run", "--drill", "1", "--drill-faults", "kill", "--drill-seed", "7",
               "--backoff", "0.1", "--kill-grace", "2", "--checkpoint-dir", cls.ckpt,
               "--events", cls.run_events, "--",
               PYTHON, WORKLOAD, "--nproc", "2", "--steps", "1000", "--checkpoint-dir", cls.ckpt,
               "--checkpoint-every", str(EVERY), "--step-sleep", "0.1"]
        cls.result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_event(self, kind):
        return [e for e in read_jsonl(self.run_events) if e["event"] == kind]

    def test_the_drill_passes(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr[-3000:])
        self.assertEqual(len(self.run_event("failure")), 1)
        self.assertEqual(self.run_event("failure")[0]["injected"], "kill")
        self.assertEqual(len(self.run_event("finished")), 1)

    def test_the_restart_resumed_right_after_the_checkpoint_plumb_named(self):
        (ck,) = self.run_event("checkpoint")
        self.assertEqual(ck["format"], "plumb")
        self.assertEqual(ck["step"] % EVERY, 0)
        self.assertEqual(ck["path"], os.path.join(self.ckpt, "step_%07d" % ck["step"]))
        self.assertIn("Loading the checkpoint at step %d." % ck["step"], self.result.stdout)
        for rank, lines in by_rank(read_jsonl(self.events)).items():
            loaded = [e for e in lines if e.get("checkpoint") == "loaded"]
            self.assertEqual([e["step"] for e in loaded], [ck["step"] + 1], "rank %s" % rank)

    def test_each_rank_writes_a_line_per_step_with_memory_and_steps_that_increase(self):
        ranks = by_rank(read_jsonl(self.events))
        self.assertEqual(sorted(ranks), [0, 1])
        for rank, lines in ranks.items():
            cut = next(i for i, e in enumerate(lines) if e.get("checkpoint") == "loaded")
            for attempt in (lines[:cut], lines[cut:]):
                steps = [e["step"] for e in attempt]
                self.assertEqual(steps, list(range(steps[0], steps[0] + len(steps))), "rank %s" % rank)
            self.assertEqual(lines[0]["step"], 1)
            self.assertEqual(lines[-1]["step"], MAX_STEPS)  # PLUMB_MAX_STEPS, not --steps 1000
            for e in lines:
                self.assertEqual(e["world_size"], 2)
                self.assertGreater(e["memory"]["reserved_bytes"], 0)
                self.assertGreater(e["memory"]["allocated_bytes"], 0)
                self.assertGreaterEqual(e["memory"]["peak_bytes"], e["memory"]["reserved_bytes"])

    def test_the_line_after_each_save_says_saved(self):
        # Every save but the last is followed by a line marked "saved" — unless the kill came
        # between that save and the next line: then the restart's first line, "loaded", follows it.
        (ck,) = self.run_event("checkpoint")
        for rank, lines in by_rank(read_jsonl(self.events)).items():
            saved = {e["step"] for e in lines if e.get("checkpoint") == "saved"}
            expected = {s + 1 for s in range(EVERY, MAX_STEPS, EVERY)}
            if ck["step"] + 1 not in saved:
                expected.discard(ck["step"] + 1)
            self.assertEqual(saved, expected, "rank %s" % rank)
            self.assertTrue(any(s > ck["step"] + 1 for s in saved), "rank %s: none after the restart" % rank)

    def test_one_trace_per_rank_holds_the_profiled_steps(self):
        files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.traces, "*")))
        self.assertEqual(files, ["rank_0.pt.trace.json", "rank_1.pt.trace.json"])
        for name in files:
            with open(os.path.join(self.traces, name)) as f:
                trace = json.load(f)
            events = trace if isinstance(trace, list) else trace["traceEvents"]
            marks = sorted(e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#"))
            self.assertEqual(marks, ["ProfilerStep#%d" % s for s in range(PROFILE[0], sum(PROFILE))])
            self.assertTrue(any(e.get("name", "").startswith("gloo:") for e in events), name)


class LeakVariant(unittest.TestCase):
    def test_resident_memory_creeps_by_the_leak_each_step(self):
        with tempfile.TemporaryDirectory() as d:
            events = os.path.join(d, "train.jsonl")
            env = dict(os.environ, PLUMB_TRAIN_EVENTS=events)
            env.pop("MASTER_PORT", None)
            subprocess.run([PYTHON, WORKLOAD, "--nproc", "2", "--steps", str(LEAK_STEPS),
                            "--leak-mb-per-step", str(LEAK_MIB)], env=env, check=True, timeout=60,
                           stdout=subprocess.DEVNULL)
            ranks = by_rank(read_jsonl(events))
        self.assertEqual(sorted(ranks), [0, 1])
        for rank, lines in ranks.items():
            lines = lines[2:]  # the first steps also allocate AdamW's state and gloo's buffers
            creep = slope([e["step"] for e in lines], [e["memory"]["reserved_bytes"] for e in lines])
            self.assertLess(abs(creep / (LEAK_MIB * MIB) - 1), LEAK_TOLERANCE,
                            "rank %s: %.0f bytes per step" % (rank, creep))


if __name__ == "__main__":
    PLUMB = os.path.abspath(sys.argv.pop(1))
    PYTHON = torch_python()
    unittest.main()
