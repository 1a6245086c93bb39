#!/usr/bin/env python3
"""plumb step beside its peers, run from source on the real trace fixtures (docs/step.md, "The
fixtures"): Holistic Trace Analysis on the Kineto traces, msprof-analyze's cluster_analysis on the
Ascend ones. Prints the tables docs/step.md quotes.

  python3 bench/step_peers.py --plumb build/src/plumb \\
      --hta PATH/HolisticTraceAnalysis --msprof PATH/msprof-analyze

PATHs are checkouts of github.com/facebookresearch/HolisticTraceAnalysis (measured at f4d0062) and
github.com/Ascend/msprof-analyze (8399c1cd); neither is part of plumb. What they need of their
Python dependencies here, from Debian (apt-get install): python3-pandas python3-numpy
python3-plotly python3-psutil python3-networkx python3-yaml python3-tqdm python3-pydot.

HTA runs twice per fixture: as plumb agrees with it (include_last_profiler_step=True: every step
of the trace; HTA_DISABLE_NS_ROUNDING=1: timestamps not rounded down to whole µs) and with its
defaults (the last step dropped, fractional µs rounded down).
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "traces"
KINETO = ["kineto-collective-args", "kineto-2ranks-of-128", "kineto-ddp-rank1-of2",
          "kineto-compute-only"]
ASCEND = ["pt-level1-2rank-text", "pt-level1-2rank-db"]
MSPROF_COLUMNS = ["Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                  "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)",
                  "Preparing"]


def hta_worker(hta: str, trace_dir: str, last_step: bool) -> None:
    """Runs in a child process (HTA reads its options from the environment once)."""
    sys.path.insert(0, hta)
    from hta.trace_analysis import TraceAnalysis  # noqa: E402 (from the checkout given)

    analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last_step)
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    out = {}
    for _, row in breakdown.iterrows():
        rank = int(row["rank"])
        pctg = overlap[overlap["rank"] == rank]["comp_comm_overlap_pctg"].iloc[0]
        out[rank] = {"idle": float(row["idle_time(us)"]), "compute": float(row["compute_time(us)"]),
                     "non_compute": float(row["non_compute_time(us)"]),
                     "kernel_time": float(row["kernel_time(us)"]),
                     "overlap_pctg": None if pctg != pctg else float(pctg)}
    print(json.dumps(out))


def run_hta(hta: str, trace_dir: Path, agree: bool) -> dict:
    env = dict(os.environ, HTA_DISABLE_NS_ROUNDING="1" if agree else "0")
    done = subprocess.run([sys.executable, __file__, "--hta-worker", hta, str(trace_dir),
                           "1" if agree else "0"], env=env, capture_output=True, text=True,
                          check=True)
    return {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def plumb_json(plumb: str, path: Path) -> dict:
    done = subprocess.run([plumb, "step", str(path), "--json", "-"], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def plumb_sums(doc: dict) -> dict:
    sums = {}
    for rank in doc["ranks"]:
        s = {k: 0.0 for k in ("step", "compute", "communication", "overlapped", "exposed",
                              "memory", "idle")}
        for step in rank["steps"]:
            s["step"] += step["step_time_us"]
            s["compute"] += step["compute_us"]
            s["communication"] += step["communication_us"]
            s["overlapped"] += step["overlapped_us"]
            s["exposed"] += step["exposed_communication_us"]
            s["memory"] += step["memory_us"]
            s["idle"] += step["idle_us"]
        sums[rank["rank"]] = s
    return sums


def hta_tables(plumb: str, hta: str) -> None:
    print("## HTA (agreeing settings) beside plumb, µs\n")
    print("| fixture | rank | HTA compute | plumb Σ compute | HTA non-compute | plumb Σ exposed + "
          "memory | HTA idle | plumb Σ idle − (Σ step − HTA kernel_time) | HTA overlap % | "
          "plumb Σ overlapped / Σ comm % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    defaults = {}
    for name in KINETO:
        agree = run_hta(hta, FIXTURES / name, True)
        defaults[name] = run_hta(hta, FIXTURES / name, False)
        sums = plumb_sums(plumb_json(plumb, FIXTURES / name))
        for rank, h in sorted(agree.items()):
            s = sums[rank]
            comm_pct = 100 * s["overlapped"] / s["communication"] if s["communication"] else None
            print(f"| {name} | {rank} | {h['compute']:.3f} | {s['compute']:.3f} | "
                  f"{h['non_compute']:.3f} | {s['exposed'] + s['memory']:.3f} | {h['idle']:.3f} | "
                  f"{s['idle'] - (s['step'] - h['kernel_time']):.3f} | {h['overlap_pctg']} | "
                  f"{'-' if comm_pct is None else f'{comm_pct:.2f}'} |")
    print("\n## HTA with its defaults (last step dropped, ns rounded down), µs\n")
    print("| fixture | rank | idle | compute | non-compute | kernel_time | overlap % |")
    print("|---|---|---|---|---|---|---|")
    for name, ranks in defaults.items():
        for rank, h in sorted(ranks.items()):
            print(f"| {name} | {rank} | {h['idle']:.3f} | {h['compute']:.3f} | "
                  f"{h['non_compute']:.3f} | {h['kernel_time']:.3f} | {h['overlap_pctg']} |")


def msprof_rows(msprof: str, fixture: Path) -> list:
    with tempfile.TemporaryDirectory(prefix="plumb-msprof-") as work:
        data = Path(work) / fixture.name
        shutil.copytree(fixture, data)
        out = Path(work) / "out"
        subprocess.run([sys.executable, "-m", "msprof_analyze.cluster_analyse.cluster_analysis",
                        "-d", str(data), "-o", str(out), "--force"],
                       env=dict(os.environ, PYTHONPATH=msprof), capture_output=True, check=True)
        result = out / "cluster_analysis_output"
        csv = result / "cluster_step_trace_time.csv"
        if csv.exists():
            lines = csv.read_text().splitlines()[1:]
            return [line.split(",") for line in lines]
        db = sqlite3.connect(result / "cluster_analysis.db")
        rows = db.execute("SELECT * FROM ClusterStepTraceTime").fetchall()
        return [[str(v) for v in row[:3 + len(MSPROF_COLUMNS)]] for row in rows]


def msprof_tables(plumb: str, msprof: str) -> None:
    print("\n## msprof-analyze cluster_step_trace_time beside plumb step --csv (msprof / plumb)\n")
    print("| fixture | step | type | index | " + " | ".join(MSPROF_COLUMNS) + " |")
    print("|---|---|---|---|" + "---|" * len(MSPROF_COLUMNS))
    for name in ASCEND:
        fixture = FIXTURES / "ascend" / name
        theirs = msprof_rows(msprof, fixture)
        done = subprocess.run([plumb, "step", str(fixture), "--csv", "-"], capture_output=True,
                              text=True, check=True)
        ours = {tuple(line.split(",")[:3]): line.split(",")[3:]
                for line in done.stdout.splitlines()[1:]}
        for row in theirs:
            mine = ours.get(tuple(row[:3]), ["?"] * len(MSPROF_COLUMNS))
            cells = [f"{a} / {b}" for a, b in zip(row[3:], mine)]
            print(f"| {name} | " + " | ".join(row[:3]) + " | " + " | ".join(cells) + " |")
        extra = sorted(set(ours) - {tuple(r[:3]) for r in theirs})
        if extra:
            print(f"\nrows plumb writes that msprof-analyze does not: {extra}")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--hta-worker":
        hta_worker(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plumb", required=True, help="the plumb binary")
    parser.add_argument("--hta", help="a HolisticTraceAnalysis checkout")
    parser.add_argument("--msprof", help="an msprof-analyze checkout")
    args = parser.parse_args()
    if args.hta:
        hta_tables(args.plumb, args.hta)
    if args.msprof:
        msprof_tables(args.plumb, args.msprof)


if __name__ == "__main__":
    main()
