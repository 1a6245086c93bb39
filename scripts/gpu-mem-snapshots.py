#!/usr/bin/env python3
"""Capture real allocator snapshots on a GPU for plumb mem's fixtures (issue 5, "Real traces").

For a lent GPU machine with PyTorch installed: three small training loops, each recorded with
torch.cuda.memory._record_memory_history() and written with _dump_snapshot():

  healthy.pickle         a two-layer MLP trained for 30 steps: no creep;
  leak.pickle            the same, keeping one 4 MiB tensor per step in a list: creep 4 MiB/step;
  fragmented_oom.pickle  under set_per_process_memory_fraction, activations of a long batch cached,
                         then shorter ones splitting them, then one large request: OOM.

Each run also writes <name>.stats.jsonl (torch.cuda.memory_stats() after every step) and the
plumb output for it (analyze and replay JSON) next to it, so that the numbers can be checked
against what the allocator itself reported. Usage: python3 scripts/gpu-mem-snapshots.py OUTDIR

This script has not been run yet: no GPU machine was lent while it was written (see
docs/mem.md, "Limits"). It uses only documented PyTorch APIs (torch.cuda.memory).
"""

import json
import os
import subprocess
import sys

import torch

MiB = 1 << 20


def record(name, out, body):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    stats = []
    try:
        body(stats)
    except torch.cuda.OutOfMemoryError as e:
        print(f"{name}: OOM as intended: {str(e).splitlines()[0]}")
    path = os.path.join(out, name + ".pickle")
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    with open(os.path.join(out, name + ".stats.jsonl"), "w") as f:
        for step, s in enumerate(stats, 1):
            f.write(json.dumps({"step": step, **s}) + "\n")
    return path


def train(stats, steps, keep=None, batch=256, width=2048):
    model = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                torch.nn.Linear(4 * width, width)).cuda()
    opt = torch.optim.Adam(model.parameters())
    for _ in range(steps):
        x = torch.randn(batch, width, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if keep is not None:
            keep.append(torch.empty(MiB, dtype=torch.float32, device="cuda"))  # 4 MiB
        torch.cuda.synchronize()
        stats.append(dict(torch.cuda.memory_stats()))


def fragment(stats):
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(4 * 1024 * MiB / total)  # a 4 GiB device
    state = [torch.empty(256 * MiB // 4, device="cuda") for _ in range(4)]  # 1 GiB
    long = [torch.empty(96 * MiB // 4, device="cuda") for _ in range(24)]  # 2.25 GiB, cached
    del long
    stats.append(dict(torch.cuda.memory_stats()))
    short = [torch.empty(64 * MiB // 4, device="cuda") for _ in range(24)]  # splits each block
    stats.append(dict(torch.cuda.memory_stats()))
    big = torch.empty(1024 * MiB // 4, device="cuda")  # no block of 1 GiB is left
    del state, short, big


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "mem-snapshots"
    os.makedirs(out, exist_ok=True)
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
    paths = [record("healthy", out, lambda s: train(s, 30)),
             record("leak", out, lambda s: train(s, 30, keep=[])),
             record("fragmented_oom", out, fragment)]
    plumb = os.environ.get("PLUMB", "build-gpu/src/plumb")
    for p in paths:
        for cmd in (["mem", "analyze", p, "--json", p + ".analyze.json"],
                    ["mem", "replay", p, "--json", p + ".replay.json"]):
            subprocess.run([plumb] + cmd, check=False)


if __name__ == "__main__":
    main()
