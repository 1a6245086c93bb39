#!/usr/bin/env python3
"""plumb's reference workload: a small GPT-style model trained with data parallelism (DDP).

What a site runs when it has no job of its own ready to take the step, memory and recovery
baselines (docs/baseline.md, "The reference workload"), and what plumb's tests run. It honours the
whole job contract through contrib/plumb_train_events.py (PLUMB_TRAIN_EVENTS, PLUMB_TRACE_DIR +
PLUMB_PROFILE_STEPS, PLUMB_SNAPSHOT_DIR, PLUMB_MAX_STEPS, PLUMB_RESUME_FROM), writes checkpoints
that `plumb run --checkpoint-dir` recognises (DIR/step_0000010/model.pt sealed by
plumb-checkpoint.json) and resumes from the one plumb names.

Ranks: MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE (LOCAL_RANK), or Open MPI's
OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK (mpirun), or Slurm's SLURM_PROCID / SLURM_NTASKS /
SLURM_LOCALID (srun); MASTER_ADDR defaults to 127.0.0.1 and MASTER_PORT to 29500. With none of
them, `--nproc N` starts N local ranks itself (Debian's torchrun fails on Python 3.11).

Devices: --device auto picks CUDA (NCCL), then Ascend NPU (torch_npu, HCCL), then CPU (gloo).

    python3 contrib/reference_workload.py --nproc 2 --steps 20                 # CPU, gloo
    mpirun -np 8 python3 contrib/reference_workload.py --steps 200 --layers 12 --d-model 768
"""

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumb_train_events import PlumbJob  # noqa: E402
from tensor_parallel import Layout, parallel_mlp  # noqa: E402

MIB = 1 << 20
FLOAT32_BYTES = 4
MANIFEST = "plumb-checkpoint.json"
MANIFEST_SCHEMA = "plumb.checkpoint/1"  # docs/run.md, "The manifest"

# (rank, world size, local rank) variables of each launcher, in the order they are tried.
LAUNCHERS = (("RANK", "WORLD_SIZE", "LOCAL_RANK"),
             ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
             ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20, help="last step to run (steps count from 1)")
    p.add_argument("--checkpoint-dir", default=os.environ.get("PLUMB_CHECKPOINT_DIR") or None,
                   help="save checkpoints here (step_NNNNNNN/ folders; default: PLUMB_CHECKPOINT_DIR, "
                        "which plumb baseline --workload sets)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="save every N steps (0: never)")
    p.add_argument("--resume", help="checkpoint folder to start from (default: PLUMB_RESUME_FROM)")
    p.add_argument("--leak-mb-per-step", type=float, default=0.0,
                   help="keep this many MiB (2^20 bytes) of tensors more after each step: a deliberate leak")
    p.add_argument("--step-sleep", type=float, default=0.0, help="seconds to sleep in each step (slower steps)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda", "npu"), default="auto")
    p.add_argument("--nproc", type=int, default=0,
                   help="start this many local ranks (when no launcher set RANK and WORLD_SIZE)")
    p.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel size: the MLP split over this many consecutive ranks "
                        "(Megatron-LM's layout); the world size must be a multiple of it")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=4, help="sequences per rank per step")
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    if args.steps < 1 or args.checkpoint_every < 0 or args.leak_mb_per_step < 0 or args.nproc < 0:
        p.error("--steps must be 1 or more; --checkpoint-every, --leak-mb-per-step, --nproc 0 or more")
    if args.tp < 1 or (4 * args.d_model) % args.tp:
        p.error("--tp must be 1 or more and divide the MLP's width 4 x --d-model (%d)" % (4 * args.d_model))
    if args.nproc and args.nproc % args.tp:
        p.error("--tp %d: the world size (%d) must be a multiple of it" % (args.tp, args.nproc))
    if args.checkpoint_every and not args.checkpoint_dir:
        p.error("--checkpoint-every needs --checkpoint-dir")
    if args.d_model % args.heads:
        p.error("--d-model (%d) must be a multiple of --heads (%d)" % (args.d_model, args.heads))
    return args


def rank_env():
    """(rank, world size, local rank) from the first launcher whose variables are set, else None."""
    for rank, size, local in LAUNCHERS:
        if os.environ.get(rank, "").isdigit() and os.environ.get(size, "").isdigit():
            return int(os.environ[rank]), int(os.environ[size]), int(os.environ.get(local, "0") or 0)
    return None


# ---- the local launcher (--nproc) ---------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_local(nproc):
    """Starts `nproc` ranks of this script on this host and waits; the first to fail stops the rest."""
    env = dict(os.environ, MASTER_ADDR=os.environ.get("MASTER_ADDR", "127.0.0.1"),
               MASTER_PORT=os.environ.get("MASTER_PORT") or str(free_port()), WORLD_SIZE=str(nproc))
    children = [subprocess.Popen([sys.executable] + sys.argv,
                                 env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
                for r in range(nproc)]
    signal.signal(signal.SIGTERM, lambda *_: [c.terminate() for c in children])
    status = 0
    while any(c.poll() is None for c in children):
        failed = [c.returncode for c in children if c.returncode not in (None, 0)]
        if failed and status == 0:
            status = failed[0]
            for c in children:
                if c.poll() is None:
                    c.terminate()
        time.sleep(0.05)
    code = status or next((c.returncode for c in children if c.returncode != 0), 0)
    return 128 - code if code < 0 else code  # a rank killed by signal N: 128 + N, as a shell says


# ---- the model ----------------------------------------------------------------------------------

def build_model(torch, args, layout=None, dist=None):
    """The GPT; with tensor parallelism (layout.tp > 1) each block's MLP is split over the
    tensor-parallel group (contrib/tensor_parallel.py)."""
    nn = torch.nn

    def mlp():
        if layout is not None and layout.tp > 1:
            return parallel_mlp(torch, dist, args.d_model, layout, args.seed)
        return nn.Sequential(nn.Linear(args.d_model, 4 * args.d_model), nn.GELU(),
                             nn.Linear(4 * args.d_model, args.d_model))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(args.d_model)
            self.attn = nn.MultiheadAttention(args.d_model, args.heads, batch_first=True)
            self.ln2 = nn.LayerNorm(args.d_model)
            self.mlp = mlp()

        def forward(self, x, mask):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(args.vocab, args.d_model)
            self.pos = nn.Embedding(args.seq_len, args.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.ln = nn.LayerNorm(args.d_model)
            self.head = nn.Linear(args.d_model, args.vocab, bias=False)

        def forward(self, tokens):
            n = tokens.shape[1]
            x = self.tok(tokens) + self.pos(torch.arange(n, device=tokens.device))
            causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=tokens.device), 1)
            for block in self.blocks:
                x = block(x, causal)
            return self.head(self.ln(x))

    return GPT()


def batch(torch, args, rank, step, device):
    """The same tokens for (rank, step) in every attempt, so a resumed run sees the same data.
    `rank` is the data-parallel rank: the ranks of a tensor-parallel group share their batch."""
    g = torch.Generator().manual_seed(args.seed * 1_000_003 + rank * 100_003 + step)
    data = torch.randint(0, args.vocab, (args.batch_size, args.seq_len + 1), generator=g)
    data = data.to(device)
    return data[:, :-1], data[:, 1:]


# ---- devices and process groups -----------------------------------------------------------------

def pick_device(torch, choice, local_rank):
    """(device, backend): CUDA with NCCL, Ascend NPU with HCCL, CPU with gloo."""
    if choice in ("auto", "cuda") and torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank), "nccl"
    if choice in ("auto", "npu"):
        try:
            import torch_npu  # noqa: F401  (Ascend only)
            if torch.npu.is_available():
                torch.npu.set_device(local_rank)
                return torch.device("npu", local_rank), "hccl"
        except ImportError:
            pass
    if choice not in ("auto", "cpu"):
        sys.exit("reference_workload: --device %s: no such device here" % choice)
    torch.set_num_threads(1)  # several ranks share the host's cores
    return torch.device("cpu"), "gloo"


# ---- checkpoints --------------------------------------------------------------------------------

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(MIB), b""):
            h.update(chunk)
    return h.hexdigest()


def seal(folder, step):
    """Writes folder/plumb-checkpoint.json as `plumb checkpoint seal` does: every file, its size
    and SHA-256, written last and renamed into place, so a save cut short is never complete."""
    files = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            if rel != MANIFEST and not rel.endswith(".part"):
                files.append({"path": rel, "size": os.path.getsize(path), "sha256": sha256(path)})
    manifest = {"schema": MANIFEST_SCHEMA, "step": step, "files": sorted(files, key=lambda f: f["path"])}
    tmp = os.path.join(folder, MANIFEST + ".part")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(folder, MANIFEST))


def checkpoint_folder(args, step):
    return os.path.join(args.checkpoint_dir, "step_%07d" % step)


def shard_name(layout):
    """model.pt, or model_tpK.pt for position K of a tensor-parallel group (one shard each)."""
    return "model.pt" if layout.tp == 1 else "model_tp%d.pt" % layout.tp_rank


def save_checkpoint(torch, dist, args, step, model, optimizer, rank, layout):
    """The first data-parallel replica writes DIR/step_NNNNNNN/model.pt (model_tpK.pt per
    tensor-parallel shard; DDP keeps the replicas the same); once every shard is written, rank 0
    seals the folder; every rank waits for the seal."""
    folder = checkpoint_folder(args, step)
    if rank == 0:
        os.makedirs(folder, exist_ok=True)
        if os.path.exists(os.path.join(folder, MANIFEST)):  # saving this step again (a restart):
            os.remove(os.path.join(folder, MANIFEST))       # not complete until sealed anew
    dist.barrier()
    if layout.dp_rank == 0:
        path = os.path.join(folder, shard_name(layout))
        torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
                   path + ".part")
        os.replace(path + ".part", path)
    dist.barrier()
    if rank == 0:
        seal(folder, step)
    dist.barrier()  # the save is finished for every rank before anyone goes on


def load_checkpoint(torch, folder, model, optimizer, layout):
    state = torch.load(os.path.join(folder, shard_name(layout)), map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return int(state["step"])


# ---- training -----------------------------------------------------------------------------------

def train(args, rank, world, local_rank):
    import torch
    import torch.distributed as dist

    device, backend = pick_device(torch, args.device, local_rank)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group(backend, rank=rank, world_size=world)
    layout = Layout(dist, rank, world, args.tp)
    torch.manual_seed(args.seed)  # every rank starts from the same weights (shards: their own)
    model = build_model(torch, args, layout, dist).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[local_rank] if device.type != "cpu" else None,
        process_group=layout.dp_group)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    job = PlumbJob(rank=rank, world_size=world, device=str(local_rank))

    first = 1
    resume = args.resume or job.resume_from
    if resume:
        first = load_checkpoint(torch, resume, model, optimizer, layout) + 1
        if rank == 0:
            print("Loading the checkpoint at step %d." % (first - 1), flush=True)
        job.checkpoint_loaded()

    leak = []  # the deliberate leak: tensors kept for ever
    leak_floats = int(args.leak_mb_per_step * MIB) // FLOAT32_BYTES
    tokens_per_step = args.batch_size * args.seq_len
    for step in job.steps(first, args.steps):
        with job.step(step, tokens=tokens_per_step):
            inputs, targets = batch(torch, args, layout.dp_rank, step, device)
            logits = ddp(inputs)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, args.vocab), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if leak_floats:
                leak.append(torch.ones(leak_floats, device=device))  # ones: the pages are touched
            if args.step_sleep:
                time.sleep(args.step_sleep)
        if rank == 0:
            print("step: %d loss: %.4f" % (step, loss.item()), flush=True)
        if args.checkpoint_every and step % args.checkpoint_every == 0:
            save_checkpoint(torch, dist, args, step, model, optimizer, rank, layout)
            job.checkpoint_saved()
    job.close()
    dist.barrier()
    dist.destroy_process_group()
    return 0


def main(argv):
    args = parse_args(argv)
    ranks = rank_env()
    if ranks is None and args.nproc:
        return launch_local(args.nproc)
    rank, world, local_rank = ranks if ranks is not None else (0, 1, 0)
    return train(args, rank, world, local_rank)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
