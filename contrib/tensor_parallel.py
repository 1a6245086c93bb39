"""Tensor parallelism for plumb's reference workload: Megatron-LM's split of the MLP.

Shoeybi et al., "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model
Parallelism" (2019), section 3: the MLP's first linear layer is split by columns (each rank of a
tensor-parallel group holds 4·d/t of its outputs), the second by rows (each rank holds the same
4·d/t of its inputs), so the GELU between them needs no communication. The partial outputs are
summed with one all-reduce over the group in the forward pass (their operator g), and the input's
gradient with one all-reduce in the backward pass (their operator f): two all-reduces of
batch × sequence × d elements per layer and step, inside the step's compute — the communication
that data parallelism alone never shows.

Ranks are laid out as Megatron-LM does: the t ranks of a tensor-parallel group are consecutive
(rank r is in group r // t, at position r % t), and the data-parallel groups take one rank of each
(ranks p, p + t, p + 2t, ...). Both need every rank to create every group, in the same order.

Standard library only at import time; torch is passed in, as the workload imports it late.
"""


class Layout:
    """Where one rank sits: its tensor-parallel group and position, its data-parallel group."""

    def __init__(self, dist, rank, world, tp):
        if tp < 1 or world % tp:
            raise ValueError("--tp %d: the world size (%d) must be a multiple of it" % (tp, world))
        self.tp = tp
        self.dp = world // tp
        self.tp_rank = rank % tp
        self.dp_rank = rank // tp
        self.tp_group = self.dp_group = None  # None: the whole world
        if tp == 1:
            return
        tp_groups = [dist.new_group(list(range(s, s + tp))) for s in range(0, world, tp)]
        dp_groups = [dist.new_group(list(range(p, world, tp))) for p in range(tp)]
        self.tp_group = tp_groups[self.dp_rank]
        self.dp_group = dp_groups[self.tp_rank]


def _operators(torch, dist):
    """Megatron's f (identity forward, all-reduce backward) and g (all-reduce forward, identity
    backward) as autograd functions."""

    class CopyToGroup(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, group):
            ctx.group = group
            return x

        @staticmethod
        def backward(ctx, grad):
            grad = grad.contiguous().clone()
            dist.all_reduce(grad, group=ctx.group)
            return grad, None

    class ReduceFromGroup(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, group):
            x = x.contiguous().clone()
            dist.all_reduce(x, group=group)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    return CopyToGroup, ReduceFromGroup


def parallel_mlp(torch, dist, d_model, layout, seed):
    """The MLP d → 4d → d with its 4d split over the tensor-parallel group. Each rank's shard is
    drawn from its own seed (seed, position), so the shards differ as the slices of one layer
    would; the second layer's bias is added once, after the sum."""
    nn = torch.nn
    copy_to, reduce_from = _operators(torch, dist)
    hidden = 4 * d_model
    if hidden % layout.tp:
        raise ValueError("--tp %d must divide the MLP's width 4 x --d-model (%d)" % (layout.tp, hidden))
    shard = hidden // layout.tp

    class ParallelMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(d_model, shard)            # columns of the first layer
            self.act = nn.GELU()
            self.fc2 = nn.Linear(shard, d_model, bias=False)  # rows of the second
            self.bias = nn.Parameter(torch.zeros(d_model))
            g = torch.Generator().manual_seed(seed * 7919 + layout.tp_rank)
            with torch.no_grad():
                for w in (self.fc1.weight, self.fc2.weight):
                    bound = 1.0 / (w.shape[1] ** 0.5)   # nn.Linear's default range
                    w.copy_(torch.rand(w.shape, generator=g) * 2 * bound - bound)

        def forward(self, x):
            x = copy_to.apply(x, layout.tp_group)
            x = self.fc2(self.act(self.fc1(x)))
            return reduce_from.apply(x, layout.tp_group) + self.bias

    return ParallelMLP()
