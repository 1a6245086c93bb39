#!/usr/bin/env python3
"""Write a large allocator snapshot pickle for bench/mem_analyze.

The file has the layout of torch.cuda.memory._dump_snapshot() (docs/mem-format.md, layout A of
tests/fixtures/mem/README.md): a dict with `segments`, `device_traces` (one device) and
`allocator_settings`; trace entries `action`, `addr`, `size`, `stream`, `time_us`, `frames`, the
frame lists shared between entries as the real snapshot shares identical tracebacks. Pickle
protocol 4, what pickle.dump writes by default.

The workload is the one bench/mem_analyze.cc synthesizes in memory: model set-up (weights and two
Adam states each), then training steps of a batch, per-layer activations under six call stacks,
a loss, backward frees and gradients, an all-reduce bucket, an optimizer temporary, and a 16 KiB
tensor kept every step (a slow leak, in 2 MiB small-pool segments). Every free is a
free_requested + free_completed pair. Addresses follow the caching allocator's steady state: each
per-step tensor reuses the block its segment got in step 1 (one segment_alloc per slot in step
1), so the final `segments` are exactly what a replay of the trace gives.

Not a capture: no GPU here. Deterministic (no randomness, no clock); standard library only.

Usage: python3 make_big_snapshot.py OUT.pickle [--mb 100] [--layers 16]
"""

import argparse
import os
import pickle

KiB = 1024
MiB = 1024 * KiB
kMinBlockSize = 512
kSmallSize = 1 * MiB
kSmallBuffer = 2 * MiB
kLargeBuffer = 20 * MiB
kMinLargeAlloc = 10 * MiB
kRoundLarge = 2 * MiB
ADDR_BASE = 0x7F3A00000000
T0_US = 1717171717000000  # 2024-05-31T16:08:37Z, as the fixtures
STEP_GAP_US = 180000
LEAK_BYTES = 16 * KiB


def fr(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


LAYER = fr("megatron/core/transformer/transformer_layer.py", 213, "forward")
STACKS = {
    "init": [fr("megatron/core/tensor_parallel/layers.py", 734, "__init__"),
             fr("megatron/training/training.py", 472, "get_model")],
    "optim_init": [fr("torch/optim/adam.py", 136, "_init_group"),
                   fr("megatron/core/optimizer/distrib_optimizer.py", 512, "__init__")],
    "batch": [fr("pretrain_gpt.py", 93, "get_batch"),
              fr("megatron/training/training.py", 1142, "train_step")],
    "qkv": [fr("megatron/core/tensor_parallel/layers.py", 611, "linear_with_grad_accumulation"),
            fr("megatron/core/transformer/attention.py", 380, "get_query_key_value_tensors"), LAYER],
    "core_attn": [fr("flash_attn/flash_attn_interface.py", 90, "_flash_attn_forward"),
                  fr("megatron/core/transformer/attention.py", 402, "forward"), LAYER],
    "attn_out": [fr("megatron/core/tensor_parallel/layers.py", 611, "linear_with_grad_accumulation"),
                 fr("megatron/core/transformer/attention.py", 420, "forward"), LAYER],
    "fc1": [fr("megatron/core/tensor_parallel/layers.py", 611, "linear_with_grad_accumulation"),
            fr("megatron/core/transformer/mlp.py", 110, "forward"), LAYER],
    "gelu": [fr("torch/nn/functional.py", 1702, "gelu"),
             fr("megatron/core/transformer/mlp.py", 117, "forward"), LAYER],
    "fc2": [fr("megatron/core/tensor_parallel/layers.py", 611, "linear_with_grad_accumulation"),
            fr("megatron/core/transformer/mlp.py", 125, "forward"), LAYER],
    "loss": [fr("megatron/core/tensor_parallel/cross_entropy.py", 141, "forward"),
             fr("pretrain_gpt.py", 152, "loss_func")],
    "backward": [fr("torch/autograd/__init__.py", 289, "backward"),
                 fr("megatron/core/pipeline_parallel/schedules.py", 371, "backward_step")],
    "grad": [fr("torch/autograd/graph.py", 744, "_engine_run_backward"),
             fr("torch/autograd/__init__.py", 289, "backward")],
    "bucket": [fr("torch/distributed/distributed_c10d.py", 2740, "all_reduce_coalesced"),
               fr("megatron/core/distributed/param_and_grad_buffer.py", 352, "start_grad_sync")],
    "optim": [fr("torch/optim/adam.py", 480, "_multi_tensor_adam"),
              fr("megatron/core/optimizer/optimizer.py", 455, "step")],
    "zero_grad": [fr("megatron/core/optimizer/optimizer.py", 118, "zero_grad"),
                  fr("megatron/training/training.py", 1120, "train_step")],
    "leak": [fr("megatron/training/training.py", 1275, "training_log"),
             fr("megatron/training/training.py", 1540, "train")],
}
# Per layer, in order: (stack, bytes). bench/mem_analyze.cc uses the same table.
LAYER_ACTIVATIONS = [("qkv", 12 * MiB), ("core_attn", 24 * MiB), ("attn_out", 4 * MiB),
                     ("fc1", 32 * MiB), ("gelu", 32 * MiB), ("fc2", 8 * MiB)]
WEIGHTS = [64 * MiB] * 8 + [8192] * 4
GRADS = [96 * MiB, 64 * MiB, 48 * MiB, 32 * MiB]
BATCH, LOSS, BUCKET, OPTIM_TMP = 131072, 4, 128 * MiB, 64 * MiB


def round_size(size):
    return max(kMinBlockSize, kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize))


def allocation_size(size):
    if size <= kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)


class Writer:
    """Trace entries and segments of one device, with fixed per-slot addresses."""

    def __init__(self):
        self.trace = []
        self.t = T0_US
        self.va_next = ADDR_BASE
        self.segments = []     # dicts: address, total_size, large, blocks {addr: [size, req, live]}
        self.slots = {}        # slot name -> (segment, addr)
        self.small = None      # the current small-pool segment and its next free offset
        self.small_used = 0

    def emit(self, action, addr, size, stack):
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                           "time_us": self.t, "frames": STACKS[stack]})
        self.t += 23 + (len(self.trace) * 37) % 61

    def new_segment(self, size, large, stack):
        seg = {"address": self.va_next, "total_size": size, "large": large, "blocks": {}}
        self.va_next += size
        self.segments.append(seg)
        self.emit("segment_alloc", seg["address"], size, stack)
        return seg

    def place(self, slot, size, stack):
        """The address of `slot`: its own large segment, or room in the current small one."""
        if slot in self.slots:
            return self.slots[slot]
        rounded = round_size(size)
        if rounded > kSmallSize:
            seg = self.new_segment(allocation_size(rounded), True, stack)
            at = (seg, seg["address"])
        else:
            if self.small is None or self.small_used + rounded > kSmallBuffer:
                self.small = self.new_segment(kSmallBuffer, False, stack)
                self.small_used = 0
            at = (self.small, self.small["address"] + self.small_used)
            self.small_used += rounded
        if slot is not None:
            self.slots[slot] = at
        return at

    def alloc(self, slot, size, stack):
        seg, addr = self.place(slot, size, stack)
        seg["blocks"][addr] = [round_size(size), size, True]
        self.emit("alloc", addr, size, stack)
        return (seg, addr, size)

    def free(self, block, stack):
        seg, addr, size = block
        self.emit("free_requested", addr, size, stack)
        self.emit("free_completed", addr, size, stack)
        seg["blocks"][addr][2] = False


def set_up(w):
    for i, size in enumerate(WEIGHTS):
        w.alloc(("w", i), size, "init")
    for state in range(2):
        for i, size in enumerate(WEIGHTS):
            w.alloc(("s", state, i), size, "optim_init")


def train_step(w, k, layers):
    w.t += STEP_GAP_US
    batch = w.alloc("batch", BATCH, "batch")
    acts = [w.alloc(("act", layer, j), size, stack)
            for layer in range(layers) for j, (stack, size) in enumerate(LAYER_ACTIVATIONS)]
    loss = w.alloc("loss", LOSS, "loss")
    w.alloc(None, LEAK_BYTES, "leak")  # kept: the leak
    w.free(loss, "backward")
    half = len(acts) // 2
    for a in reversed(acts[half:]):
        w.free(a, "backward")
    grads = [w.alloc(("grad", i), g, "grad") for i, g in enumerate(GRADS[:2])]
    for a in reversed(acts[:half]):
        w.free(a, "backward")
    grads += [w.alloc(("grad", i + 2), g, "grad") for i, g in enumerate(GRADS[2:])]
    bucket = w.alloc("bucket", BUCKET, "bucket")
    opt = w.alloc("optim", OPTIM_TMP, "optim")
    w.free(opt, "optim")
    for g in grads:
        w.free(g, "zero_grad")
    w.free(batch, "zero_grad")
    w.free(bucket, "bucket")


def segment_dicts(w):
    out = []
    for seg in w.segments:
        blocks, cursor, end = [], seg["address"], seg["address"] + seg["total_size"]
        for addr in sorted(seg["blocks"]):
            size, req, live = seg["blocks"][addr]
            if live:
                if addr > cursor:
                    blocks.append({"address": cursor, "size": addr - cursor, "requested_size": 0,
                                   "state": "inactive", "frames": []})
                blocks.append({"address": addr, "size": size, "requested_size": req,
                               "state": "active_allocated", "frames": []})
                cursor = addr + size
        if cursor < end:
            blocks.append({"address": cursor, "size": end - cursor, "requested_size": 0,
                           "state": "inactive", "frames": []})
        live = [b for b in blocks if b["state"] == "active_allocated"]
        out.append({
            "device": 0, "address": seg["address"], "total_size": seg["total_size"],
            "allocated_size": sum(b["size"] for b in live),
            "active_size": sum(b["size"] for b in live),
            "requested_size": sum(b["requested_size"] for b in live), "stream": 0,
            "segment_type": "large" if seg["large"] else "small", "segment_pool_id": (0, 0),
            "is_expandable": False, "blocks": blocks, "frames": [],
        })
    return out


def snapshot(steps, layers):
    w = Writer()
    set_up(w)
    for k in range(1, steps + 1):
        train_step(w, k, layers)
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                "garbage_collection_threshold": 0.0, "expandable_segments": False}
    return {"segments": segment_dicts(w), "device_traces": [w.trace], "allocator_settings": settings}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--mb", type=float, default=100, help="approximate size of the file in MB")
    p.add_argument("--layers", type=int, default=16)
    a = p.parse_args()
    probe_steps = 20
    probe = len(pickle.dumps(snapshot(probe_steps, a.layers), protocol=4))
    steps = max(probe_steps, int(a.mb * 1e6 / probe * probe_steps))
    snap = snapshot(steps, a.layers)
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print("%s: %d steps, %d trace entries, %d segments, %d bytes"
          % (a.out, steps, len(snap["device_traces"][0]), len(snap["segments"]),
             os.path.getsize(a.out)))


if __name__ == "__main__":
    main()
