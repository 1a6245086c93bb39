"""The reference workload's tensor parallelism (contrib/tensor_parallel.py), with real PyTorch.

    python3 tensor_parallel_e2e.py

1. The split MLP is the dense MLP: on 2 gloo ranks, the output and the input's gradient of
   ParallelMLP equal those of one nn.Linear → GELU → nn.Linear built from the concatenated shards
   (fc1 by rows of its weight, fc2 by columns), and each shard's weight gradient is the matching
   slice of the dense one.
2. The workload with --tp 2 on 4 ranks (2 tensor × 2 data parallel) keeps every replicated
   parameter identical across the tensor-parallel group, writes one shard per position, and a run
   resumed from its step-3 checkpoint gives the same losses for steps 4 to 6 as the run that never
   stopped.
Needs Debian's python3-torch (run under the first of this interpreter and /usr/bin/python3 that
imports torch). Exit 0 when every check holds.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CONTRIB = os.path.join(HERE, "..", "..", "contrib")
WORKLOAD = os.path.join(CONTRIB, "reference_workload.py")
D_MODEL = 8
TOLERANCE = 1e-5  # float32 sums taken in another order


def torch_python():
    for python in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([python, "-c", "import torch.distributed"], capture_output=True).returncode == 0:
            return python
    sys.exit("tensor_parallel_e2e: no python3 here imports torch: install python3-torch "
             "(scripts/install-deps)")


def rank_main(rank, out):
    """One rank of check 1: run ParallelMLP, gather the shards, compare with the dense MLP."""
    import torch
    import torch.distributed as dist
    sys.path.insert(0, CONTRIB)
    from tensor_parallel import Layout, parallel_mlp

    dist.init_process_group("gloo", rank=rank, world_size=2)
    layout = Layout(dist, rank, 2, 2)
    mlp = parallel_mlp(torch, dist, D_MODEL, layout, seed=5)
    with torch.no_grad():
        mlp.bias.copy_(torch.linspace(-1, 1, D_MODEL))
    x = torch.randn(3, 4, D_MODEL, generator=torch.Generator().manual_seed(11), requires_grad=True)
    y = mlp(x)
    y.pow(2).sum().backward()
    gathered = []
    for t in (mlp.fc1.weight, mlp.fc1.bias, mlp.fc2.weight, mlp.fc1.weight.grad, mlp.fc2.weight.grad):
        parts = [torch.zeros_like(t) for _ in range(2)]
        dist.all_gather(parts, t.detach().contiguous())
        gathered.append(parts)
    if rank == 0:
        dense = torch.nn.Sequential(torch.nn.Linear(D_MODEL, 4 * D_MODEL), torch.nn.GELU(),
                                    torch.nn.Linear(4 * D_MODEL, D_MODEL))
        with torch.no_grad():
            dense[0].weight.copy_(torch.cat(gathered[0], 0))
            dense[0].bias.copy_(torch.cat(gathered[1], 0))
            dense[2].weight.copy_(torch.cat(gathered[2], 1))
            dense[2].bias.copy_(mlp.bias)
        x2 = x.detach().clone().requires_grad_(True)
        y2 = dense(x2)
        y2.pow(2).sum().backward()
        checks = {
            "output": (y - y2).abs().max().item(),
            "input gradient": (x.grad - x2.grad).abs().max().item(),
            "fc1 weight gradient": (torch.cat(gathered[3], 0) - dense[0].weight.grad).abs().max().item(),
            "fc2 weight gradient": (torch.cat(gathered[4], 1) - dense[2].weight.grad).abs().max().item(),
        }
        with open(out, "w") as f:
            for name, err in checks.items():
                f.write("%s %.3g\n" % (name, err))
    dist.barrier()
    dist.destroy_process_group()


def losses(output):
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^step: (\d+) loss: (\S+)$", output, re.M)}


class SplitMlpIsTheDenseMlp(unittest.TestCase):
    def test_output_and_gradients_match(self):
        python = torch_python()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "errors.txt")
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
            ranks = [subprocess.Popen([python, __file__, "--rank", str(r), out], env=env) for r in range(2)]
            self.assertEqual([p.wait(timeout=120) for p in ranks], [0, 0])
            with open(out) as f:
                errors = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in f}
        self.assertEqual(sorted(errors), ["fc1 weight gradient", "fc2 weight gradient",
                                          "input gradient", "output"])
        for name, err in errors.items():
            self.assertLess(err, TOLERANCE, name)


class WorkloadWithTensorParallelism(unittest.TestCase):
    def test_replicas_agree_and_resume_repeats_the_losses(self):
        python = torch_python()
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = os.path.join(tmp, "ckpt")
            common = [python, WORKLOAD, "--nproc", "4", "--tp", "2", "--steps", "6"]
            whole = subprocess.run(common + ["--checkpoint-dir", ckpt, "--checkpoint-every", "3"],
                                   capture_output=True, text=True, timeout=240)
            self.assertEqual(whole.returncode, 0, whole.stderr[-2000:])
            step3 = os.path.join(ckpt, "step_0000003")
            self.assertEqual(sorted(os.listdir(step3)),
                             ["model_tp0.pt", "model_tp1.pt", "plumb-checkpoint.json"])
            check = subprocess.run([python, "-c", REPLICATED, os.path.join(ckpt, "step_0000006")],
                                   capture_output=True, text=True, timeout=120)
            self.assertEqual(check.returncode, 0, check.stderr[-2000:])
            self.assertEqual(check.stdout.split(), ["replicated", "23", "sharded", "6"])
            resumed = subprocess.run(common + ["--resume", step3], capture_output=True, text=True,
                                     timeout=240)
            self.assertEqual(resumed.returncode, 0, resumed.stderr[-2000:])
        self.assertIn("Loading the checkpoint at step 3.", resumed.stdout)
        expected = {s: v for s, v in losses(whole.stdout).items() if s > 3}
        self.assertEqual(sorted(expected), [4, 5, 6])
        self.assertEqual(losses(resumed.stdout), expected)

    def test_a_tp_that_does_not_divide_the_world_is_refused(self):
        python = torch_python()
        run = subprocess.run([python, WORKLOAD, "--nproc", "3", "--tp", "2", "--steps", "1"],
                             capture_output=True, text=True, timeout=120)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("--tp 2: the world size (3) must be a multiple of it", run.stderr)


# Every parameter but the MLP shards (the MLPs' summed-output bias included) is the same on both
# positions of the tensor-parallel group; the shards (fc1 weight and bias, fc2 weight of each of
# the 2 layers) differ.
REPLICATED = """
import sys, torch
a = torch.load(sys.argv[1] + "/model_tp0.pt")["model"]
b = torch.load(sys.argv[1] + "/model_tp1.pt")["model"]
shard = lambda k: ".mlp.fc" in k
same = [k for k in a if not shard(k) and torch.equal(a[k], b[k])]
apart = [k for k in a if shard(k) and not torch.equal(a[k], b[k])]
assert len(same) == sum(not shard(k) for k in a), "replicated parameters differ"
print("replicated", len(same), "sharded", len(apart))
"""


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rank":
        os.environ["RANK"] = sys.argv[2]
        rank_main(int(sys.argv[2]), sys.argv[3])
        sys.exit(0)
    unittest.main()
