"""Write plumb.train-events/1 from a PyTorch training loop, for `plumb exporter --events FILE`.

One JSON object per line, one line per step, appended with O_APPEND in a single write (lines of
several ranks sharing a file never interleave) and on disk as soon as the step ends. Standard
library only; when torch is importable and a CUDA (torch.cuda) or Ascend (torch.npu, torch_npu)
device is in use, each line carries the device's memory figures. Schema: docs/train-events.md.

    from plumb_train_events import TrainEvents

    events = TrainEvents("/tmp/train-events.jsonl", rank=rank, world_size=world_size)
    for step, batch in enumerate(loader):
        with events.step(step, tokens=batch.numel()) as s:
            loss = model(batch).sum()
            loss.backward()
            t0 = time.perf_counter(); dist.all_reduce(grad); torch.cuda.synchronize()
            s.collective("allreduce", grad.numel() * grad.element_size(),
                         time.perf_counter() - t0, ranks=world_size, layer="world")
            optimizer.step()
"""

import json
import math
import os
import time

SCHEMA = "plumb.train-events/1"
LAYERS = ("world", "node", "rail", "spine")  # plumb comm's layers; the exporter refuses others


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
    """Appends plumb.train-events/1 lines to `path` (created when missing)."""

    def __init__(self, path, rank=None, world_size=None, device=None, memory=True):
        self.path = path
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self._memory = _memory_module() if memory else None
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def step(self, step, tokens=None):
        """`with events.step(n, tokens=...) as s:` times the block and writes its line at the end."""
        return Step(self, step, tokens)

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
        line = json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n"
        os.write(self._fd, line.encode("utf-8"))  # one write: whole lines under O_APPEND
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
        if self._memory is None:
            return None
        m = self._memory
        return {"allocated_bytes": int(m.memory_allocated()),
                "reserved_bytes": int(m.memory_reserved()),
                "peak_bytes": int(m.max_memory_allocated())}

    def _reset_peak(self):
        # The peak of this step alone, not of the whole run so far.
        if self._memory is not None and hasattr(self._memory, "reset_peak_memory_stats"):
            self._memory.reset_peak_memory_stats()

    def _synchronize(self):
        # Device work is asynchronous: the step ends when the device is done with it.
        if self._memory is not None and hasattr(self._memory, "synchronize"):
            self._memory.synchronize()
