"""The job side of plumb's contract (docs/baseline.md, "The job contract") for a PyTorch loop.

`plumb run` and `plumb baseline --workload` tell the job what they want through the environment;
`PlumbJob` reads it once and does the rest in a few lines of the loop:

    from plumb_train_events import PlumbJob

    job = PlumbJob(rank=rank, world_size=world_size)      # reads the PLUMB_* variables
    first = 1
    if job.resume_from:                                   # PLUMB_RESUME_FROM: plumb run restarted us
        first = load_checkpoint(job.resume_from) + 1      # your loader; returns the step it holds
        job.checkpoint_loaded()                           # the next line says "checkpoint": "loaded"
    for step in job.steps(first, args.steps):             # stops at PLUMB_MAX_STEPS too
        with job.step(step, tokens=batch.numel()):        # times, profiles, writes the line
            loss = model(batch).sum(); loss.backward(); optimizer.step()
        if step % args.checkpoint_every == 0:
            save_checkpoint(step)
            job.checkpoint_saved()                        # the next line says "checkpoint": "saved"
    job.close()

Steps are numbered from 1, as plumb run counts progress: a checkpoint written after step 10 holds
step 10 and a restart from it runs step 11 first.

| variable | set by | what PlumbJob does |
|---|---|---|
| PLUMB_TRAIN_EVENTS=FILE | plumb | appends one plumb.train-events/1 line per step (docs/train-events.md) |
| PLUMB_TRACE_DIR=DIR | plumb | the folder for the profiler traces (one file per rank) |
| PLUMB_PROFILE_STEPS=START:COUNT | plumb | profiles steps START .. START+COUNT-1 (torch.profiler) |
| PLUMB_SNAPSHOT_DIR=DIR | plumb | an allocator snapshot per rank at the end of that window (CUDA, NPU) |
| PLUMB_MAX_STEPS=N | plumb | `steps()` ends after step N |
| PLUMB_RESUME_FROM, PLUMB_RESUME_STEP | plumb run | `resume_from`, `resume_step` |
| PLUMB_RESTART=n | plumb run | `restart` (0 on the first attempt) |

A variable that is set but malformed raises ValueError naming it ("PLUMB_PROFILE_STEPS='3': expected
START:COUNT, ..."), at construction, before the first step.

Memory figures on each line: torch.cuda or torch.npu (torch_npu) when available
(memory_allocated, memory_reserved, max_memory_allocated reset at each step's start); otherwise the
process's resident memory from /proc/self (allocated_bytes and reserved_bytes are both VmRSS,
peak_bytes the step's VmHWM after a reset through /proc/self/clear_refs). Standard library only;
torch is imported only when it is installed.

The lower-level `TrainEvents` (below) writes lines directly, for a loop that does its own timing.
"""

import json
import math
import os
import pickle
import sys
import time

SCHEMA = "plumb.train-events/1"
LAYERS = ("world", "node", "rail", "spine")  # plumb comm's layers; the exporter refuses others
CHECKPOINT_EVENTS = ("saved", "loaded")  # the values of the "checkpoint" field


def _memory_module():
    """torch.cuda or torch.npu when torch is importable and that device is available, else None."""
    try:
        import torch  # noqa: F401  (optional dependency)
    except ImportError:
        return None
    for name in ("cuda", "npu"):
        module = getattr(torch, name, None)
        try:
            if module is not None and module.is_available():
                return module
        except Exception:  # a half-installed backend must not stop the training loop
            continue
    return None


def _check_seconds(what, seconds, positive=False):
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise ValueError("%s: seconds must be a finite number, got %r" % (what, seconds))
    if seconds < 0 or (positive and seconds == 0):
        raise ValueError("%s: seconds must be %s, got %r" % (what, "above 0" if positive else "at least 0", seconds))
    return float(seconds)


def _check_whole(what, value, least):
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError("%s must be a whole number of at least %d, got %r" % (what, least, value))
    return value


class _DeviceMemory:
    """Figures of torch.cuda / torch.npu: the caching allocator's own counts."""

    def __init__(self, module):
        self.module = module

    def figures(self):
        m = self.module
        return {"allocated_bytes": int(m.memory_allocated()),
                "reserved_bytes": int(m.memory_reserved()),
                "peak_bytes": int(m.max_memory_allocated())}

    def reset_peak(self):
        # The peak of this step alone, not of the whole run so far.
        if hasattr(self.module, "reset_peak_memory_stats"):
            self.module.reset_peak_memory_stats()

    def synchronize(self):
        # Device work is asynchronous: the step ends when the device is done with it.
        if hasattr(self.module, "synchronize"):
            self.module.synchronize()


class _ProcessMemory:
    """The process's resident memory (Linux /proc), for a job with no device allocator (CPU)."""

    def __init__(self, proc="/proc/self"):
        self.proc = proc
        self.peak_reset = False

    def _status_bytes(self, key):
        with open(os.path.join(self.proc, "status")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024  # "VmRSS:   123456 kB"
        return None

    def figures(self):
        try:
            rss = self._status_bytes("VmRSS")
            peak = self._status_bytes("VmHWM") if self.peak_reset else None
        except (OSError, ValueError):
            return None
        if rss is None:
            return None
        out = {"allocated_bytes": rss, "reserved_bytes": rss}
        if peak is not None:
            out["peak_bytes"] = max(peak, rss)
        return out

    def reset_peak(self):
        # "5" resets VmHWM to the current RSS (proc(5), clear_refs, Linux 4.0); without it the
        # peak would be the whole process's, so it is left out rather than reported wrong.
        try:
            with open(os.path.join(self.proc, "clear_refs"), "w") as f:
                f.write("5")
            self.peak_reset = True
        except OSError:
            self.peak_reset = False

    def synchronize(self):
        pass


def _memory_source():
    module = _memory_module()
    if module is not None:
        return _DeviceMemory(module)
    if os.path.exists("/proc/self/status"):
        return _ProcessMemory()
    return None


class Step:
    """One step being timed: add operator and collective durations to it."""

    def __init__(self, events, step, tokens):
        self._events = events
        self.step = _check_whole("step", step, 0)
        self.tokens = tokens
        self.operators = {}
        self.collectives = []
        self._start = None

    def operator(self, name, seconds):
        """Adds `seconds` to operator `name` (an operator run several times sums up)."""
        seconds = _check_seconds("operator %r" % name, seconds)
        self.operators[str(name)] = self.operators.get(str(name), 0.0) + seconds

    def collective(self, collective, nbytes, seconds, ranks, layer="world"):
        """One collective call: its message size as nccl-tests counts it, duration, group size."""
        if str(layer) not in LAYERS:
            raise ValueError("layer must be one of %s, got %r" % (", ".join(LAYERS), layer))
        self.collectives.append({
            "collective": str(collective),
            "bytes": _check_whole("bytes", nbytes, 0),
            "seconds": _check_seconds("collective %r" % collective, seconds, positive=True),
            "ranks": _check_whole("ranks", ranks, 1),
            "layer": str(layer),
        })

    def __enter__(self):
        self._events._reset_peak()
        self._start = time.perf_counter()
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:  # a step that raised did not complete: nothing is written
            self._events._synchronize()
            self._events.write(self.step, time.perf_counter() - self._start, tokens=self.tokens,
                               operators=self.operators, collectives=self.collectives)
        return False


class TrainEvents:
    """Appends plumb.train-events/1 lines to `path` (created when missing).

    memory=True takes the figures of torch.cuda / torch.npu, else the process's RSS (module
    docstring); memory=False writes none."""

    def __init__(self, path, rank=None, world_size=None, device=None, memory=True):
        self.path = path
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self._memory = _memory_source() if memory else None
        self._checkpoint = None
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def step(self, step, tokens=None):
        """`with events.step(n, tokens=...) as s:` times the block and writes its line at the end."""
        return Step(self, step, tokens)

    def checkpoint(self, what):
        """Marks the next line with "checkpoint": `what` ("saved" or "loaded"): call it once the
        save or load has finished."""
        if what not in CHECKPOINT_EVENTS:
            raise ValueError("checkpoint must be one of %s, got %r" % (", ".join(CHECKPOINT_EVENTS), what))
        self._checkpoint = what

    def write(self, step, step_seconds, tokens=None, operators=None, collectives=None,
              memory=None, time_now=None):
        """Writes one line; returns the object written. `memory` (a dict of allocated_bytes,
        reserved_bytes, peak_bytes) overrides what torch reports."""
        event = {"schema": SCHEMA, "time": time.time() if time_now is None else time_now,
                 "step": _check_whole("step", step, 0),
                 "step_seconds": _check_seconds("step", step_seconds, positive=True)}
        if tokens is not None:
            event["tokens"] = _check_whole("tokens", tokens, 0)
        for key, value in (("rank", self.rank), ("world_size", self.world_size),
                           ("device", self.device)):
            if value is not None:
                event[key] = value
        memory = memory if memory is not None else self._memory_figures()
        if memory:
            event["memory"] = memory
        if operators:
            event["operators"] = dict(operators)
        if collectives:
            event["collectives"] = list(collectives)
        if self._checkpoint is not None:
            event["checkpoint"] = self._checkpoint
        line = json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n"
        os.write(self._fd, line.encode("utf-8"))  # one write: whole lines under O_APPEND
        self._checkpoint = None
        return event

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _memory_figures(self):
        return self._memory.figures() if self._memory is not None else None

    def _reset_peak(self):
        if self._memory is not None:
            self._memory.reset_peak()

    def _synchronize(self):
        if self._memory is not None:
            self._memory.synchronize()


# ---- the environment contract -------------------------------------------------------------------

def _env_whole(env, name, least):
    """The whole number in env[name] (at least `least`), None when unset or empty."""
    text = env.get(name, "")
    if text == "":
        return None
    try:
        value = int(text.strip(), 10)
    except ValueError:
        value = None
    if value is None or value < least:
        raise ValueError("%s=%r: expected a whole number of at least %d" % (name, text, least))
    return value


def parse_profile_steps(text, name="PLUMB_PROFILE_STEPS"):
    """"START:COUNT" → (START, COUNT): START ≥ 0, COUNT ≥ 1. ValueError naming `name` otherwise."""
    parts = text.split(":")
    try:
        start, count = (int(p.strip(), 10) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        start, count = None, None
    if start is None or start < 0 or count < 1:
        raise ValueError("%s=%r: expected START:COUNT, the first step to profile (0 or more) and "
                         "how many steps (1 or more), e.g. 10:3" % (name, text))
    return start, count


def _rank_from_env(env):
    for name in ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"):
        if env.get(name, "").isdigit():
            return int(env[name])
    return 0


def _say(text):
    sys.stderr.write("plumb_train_events: %s\n" % text)
    sys.stderr.flush()


class _Profiler:
    """torch.profiler over steps START .. START+COUNT-1, one trace file per rank in `trace_dir`;
    an allocator snapshot at the window's end in `snapshot_dir` where the backend has one."""

    def __init__(self, trace_dir, window, snapshot_dir, rank):
        self.trace_dir, self.snapshot_dir, self.rank = trace_dir, snapshot_dir, rank
        self.first, self.last = window[0], window[0] + window[1] - 1
        self.profile = None
        self.step_mark = None
        self.written = []  # the paths written, for the caller and the tests

    def enter(self, step):
        if step < self.first or step > self.last:
            return
        import torch
        if self.profile is None:
            self._start(torch)
        self.step_mark = torch.autograd.profiler.record_function("ProfilerStep#%d" % step)
        self.step_mark.__enter__()

    def exit(self, step):
        if self.step_mark is not None:
            self.step_mark.__exit__(None, None, None)
            self.step_mark = None
        if self.profile is not None and step >= self.last:
            self._finish()

    def _start(self, torch):
        os.makedirs(self.trace_dir, exist_ok=True)
        self.npu = _torch_npu_profiler()
        if self.npu is not None:  # Ascend: torch_npu's profiler writes its own folder per rank
            acts = [self.npu.ProfilerActivity.CPU, self.npu.ProfilerActivity.NPU]
            handler = self.npu.tensorboard_trace_handler(self.trace_dir, worker_name="rank_%d" % self.rank)
            self.profile = self.npu.profile(activities=acts, on_trace_ready=handler)
        else:
            acts = [torch.profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available():
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            self.profile = torch.profiler.profile(activities=acts)
        self.profile.start()
        self._record_history(True)

    def _finish(self):
        profile, self.profile = self.profile, None
        profile.stop()  # torch_npu's handler writes its folder here
        if self.npu is None:
            path = os.path.join(self.trace_dir, "rank_%d.pt.trace.json" % self.rank)
            profile.export_chrome_trace(path + ".part")
            os.replace(path + ".part", path)  # never a half-written trace under the final name
            self.written.append(path)
        if self.snapshot_dir:
            self._snapshot()
        self._record_history(False)

    def _allocator(self):
        """torch.cuda.memory or torch.npu.memory when that device is in use and can snapshot."""
        module = _memory_module()
        memory = getattr(module, "memory", None) if module is not None else None
        return memory if memory is not None and hasattr(memory, "_snapshot") else None

    def _record_history(self, on):
        memory = self._allocator()
        if self.snapshot_dir and memory is not None and hasattr(memory, "_record_memory_history"):
            memory._record_memory_history(on)

    def _snapshot(self):
        memory = self._allocator()
        if memory is None:
            _say("PLUMB_SNAPSHOT_DIR is set but this job has no CUDA or NPU caching allocator "
                 "(CPU): no allocator snapshot is written")
            return
        os.makedirs(self.snapshot_dir, exist_ok=True)
        path = os.path.join(self.snapshot_dir, "rank_%d.pickle" % self.rank)
        with open(path + ".part", "wb") as f:
            pickle.dump(memory._snapshot(), f)
        os.replace(path + ".part", path)
        self.written.append(path)


def _torch_npu_profiler():
    try:
        import torch_npu  # noqa: F401  (Ascend only)
        import torch
        if torch.npu.is_available():
            return torch_npu.profiler
    except Exception:  # not installed, or no NPU here
        pass
    return None


class _JobStep:
    def __init__(self, job, step, tokens):
        self.job, self.step = job, step
        self.inner = job.events.step(step, tokens) if job.events is not None else None

    def __enter__(self):
        if self.job.profiler is not None:
            self.job.profiler.enter(self.step)
        return self.inner.__enter__() if self.inner is not None else None

    def __exit__(self, kind, value, traceback):
        try:
            if self.inner is not None:
                self.inner.__exit__(kind, value, traceback)
        finally:
            if self.job.profiler is not None:
                self.job.profiler.exit(self.step)
        return False


class PlumbJob:
    """Everything plumb asks of a training loop through the environment (module docstring).

    rank: this process's rank (default: RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, else 0);
    world_size, device: written on each line when given; env: the variables (default os.environ).
    """

    def __init__(self, rank=None, world_size=None, device=None, env=None):
        env = os.environ if env is None else env
        self.rank = _rank_from_env(env) if rank is None else rank
        self.max_steps = _env_whole(env, "PLUMB_MAX_STEPS", 1)
        self.resume_from = env.get("PLUMB_RESUME_FROM") or None
        self.resume_step = _env_whole(env, "PLUMB_RESUME_STEP", 0)
        self.restart = _env_whole(env, "PLUMB_RESTART", 0) or 0
        self.profiler = self._profiler(env)
        path = env.get("PLUMB_TRAIN_EVENTS") or None
        self.events = TrainEvents(path, rank=self.rank, world_size=world_size,
                                  device=device) if path else None

    def _profiler(self, env):
        trace_dir = env.get("PLUMB_TRACE_DIR") or None
        window = env.get("PLUMB_PROFILE_STEPS") or None
        if window is None:
            return None
        window = parse_profile_steps(window)
        if trace_dir is None:
            raise ValueError("PLUMB_PROFILE_STEPS=%r is set but PLUMB_TRACE_DIR is not: the traces "
                             "need a folder" % env["PLUMB_PROFILE_STEPS"])
        return _Profiler(trace_dir, window, env.get("PLUMB_SNAPSHOT_DIR") or None, self.rank)

    def steps(self, first, last):
        """The step numbers first .. last, ending at PLUMB_MAX_STEPS when that is lower."""
        if self.max_steps is not None:
            last = min(last, self.max_steps)
        return range(first, last + 1)

    def step(self, step, tokens=None):
        """`with job.step(n):` around one training step: profiles it when it is in the window,
        then writes its line (a step that raises writes none)."""
        return _JobStep(self, step, tokens)

    def checkpoint_saved(self):
        """Call once a checkpoint save has finished: the next line says "checkpoint": "saved"."""
        if self.events is not None:
            self.events.checkpoint("saved")

    def checkpoint_loaded(self):
        """Call once a checkpoint load has finished: the next line says "checkpoint": "loaded"."""
        if self.events is not None:
            self.events.checkpoint("loaded")

    @property
    def written(self):
        """The trace and snapshot files written so far."""
        return list(self.profiler.written) if self.profiler is not None else []

    def close(self):
        """Ends a profiled window still open (the loop stopped inside it) and closes the file."""
        if self.profiler is not None and self.profiler.profile is not None:
            self.profiler._finish()
        if self.events is not None:
            self.events.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
