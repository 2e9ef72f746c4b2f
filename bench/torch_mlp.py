"""Python PyTorch training loop with the mlp policy's architecture: the Python peer of shardkit-train.

Same model, batch shapes, data access (index_select from an in-memory table), loss, gradient
clipping (clip_grad_norm_) and optimizer (torch.optim.AdamW) as bench/libtorch_mlp.cpp; gradients
are set to None after each step, as shardkit does. Run it with the SDK venv's Python (PyTorch
2.15.0, the same wheel as shardkit's LibTorch).

Prints one JSON line: {"program":"python","steps":..,"measured_steps":..,"steps_per_s":..}
where steps/s counts the steps after --warmup_steps only (start-up and warm-up excluded).
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    """Pre-norm residual block: x + fc2(gelu(fc1(norm(x))))."""

    def __init__(self, dim, expansion):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * expansion)
        self.fc2 = nn.Linear(dim * expansion, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Mlp(nn.Module):
    """input_proj -> blocks -> head, as shardkit's mlp policy."""

    def __init__(self, state_dim, dim, num_blocks, expansion, action_dim):
        super().__init__()
        self.input_proj = nn.Linear(state_dim, dim)
        self.blocks = nn.Sequential(*[Block(dim, expansion) for _ in range(num_blocks)])
        self.head = nn.Linear(dim, action_dim)

    def forward(self, x):
        return self.head(self.blocks(self.input_proj(x)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("hidden_dim", 128), ("num_blocks", 4), ("expansion", 2), ("batch_size", 8),
                          ("state_dim", 16), ("action_dim", 4), ("num_samples", 4096), ("steps", 100),
                          ("warmup_steps", 10), ("seed", 1000), ("num_threads", 1)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--grad_clip_norm", type=float, default=10.0)
    p.add_argument("--out", default="", help="append the JSON line to this file too")
    a = p.parse_args()
    if a.warmup_steps >= a.steps:
        p.error("--warmup_steps must be below --steps")

    torch.set_num_threads(a.num_threads)
    torch.manual_seed(a.seed)
    states = torch.randn(a.num_samples, a.state_dim)
    actions = torch.randn(a.num_samples, a.action_dim)
    model = Mlp(a.state_dim, a.hidden_dim, a.num_blocks, a.expansion, a.action_dim)
    model.train()
    params = list(model.parameters())
    optimizer = torch.optim.AdamW(params, lr=a.lr, weight_decay=a.weight_decay)

    perm = torch.randperm(a.num_samples)
    cursor = 0
    loss_value = 0.0
    start = time.perf_counter()
    for step in range(a.steps):
        if step == a.warmup_steps:
            start = time.perf_counter()
        if cursor + a.batch_size > a.num_samples:
            perm = torch.randperm(a.num_samples)
            cursor = 0
        index = perm[cursor:cursor + a.batch_size]
        cursor += a.batch_size
        x = states.index_select(0, index)
        y = actions.index_select(0, index)

        loss = F.mse_loss(model(x), y)
        loss.backward()
        loss_value = loss.item()
        torch.nn.utils.clip_grad_norm_(params, a.grad_clip_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - start
    measured = a.steps - a.warmup_steps
    line = json.dumps({"program": "python", "steps": a.steps, "measured_steps": measured,
                       "steps_per_s": measured / seconds, "final_loss": loss_value})
    print(line, flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
