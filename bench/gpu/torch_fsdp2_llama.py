"""PyTorch FSDP2 training of a transformers Llama in bf16: the peer of bench/gpu's shardkit runs.

    python -m torch.distributed.run --nproc_per_node=1 bench/gpu/torch_fsdp2_llama.py \\
        --hidden_size=2048 --intermediate_size=8192 --num_hidden_layers=16 --num_attention_heads=32 \\
        --num_key_value_heads=8 --vocab_size=128256 --batch_size=8 --seq_len=2048 --steps=20

fully_shard on every LlamaDecoderLayer and then the root, MixedPrecisionPolicy(param_dtype=bf16,
reduce_dtype=fp32) over fp32 parameters, fused AdamW (lr 1e-4), transformers' own loss
(labels = input_ids) on random tokens, sdpa attention; NCCL on cuda (the default), Gloo with
--device=cpu (a small dry run on a machine without a GPU). Throughput is timed over the steps
after --warmup_steps (synchronised); peak memory is torch.cuda.max_memory_allocated. Rank 0 prints
one JSON line: tokens/s of the whole job, the model's parameter count and peak bytes per rank.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from transformers import LlamaConfig, LlamaForCausalLM


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("hidden_size", 2048), ("intermediate_size", 8192), ("num_hidden_layers", 16),
                          ("num_attention_heads", 32), ("num_key_value_heads", 8), ("vocab_size", 128256),
                          ("batch_size", 8), ("seq_len", 2048), ("steps", 20), ("warmup_steps", 5)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    return p.parse_args()


def main():
    a = parse_args()
    cuda = a.device == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=a.vocab_size, hidden_size=a.hidden_size, intermediate_size=a.intermediate_size,
                         num_hidden_layers=a.num_hidden_layers, num_attention_heads=a.num_attention_heads,
                         num_key_value_heads=a.num_key_value_heads, max_position_embeddings=max(a.seq_len, 2048),
                         tie_word_embeddings=True, attn_implementation="sdpa")
    with torch.device(device):
        model = LlamaForCausalLM(config)
    params = sum(p.numel() for p in model.parameters())
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16 if a.dtype == "bf16" else torch.float32,
                              reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda)
    g = torch.Generator(device="cpu").manual_seed(1 + rank)
    ids = torch.randint(0, a.vocab_size, (a.batch_size, a.seq_len), generator=g).to(device)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    start = None
    for step in range(a.warmup_steps + a.steps):
        if step == a.warmup_steps:
            sync()
            dist.barrier()
            start = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    sync()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated(device) if cuda else 0
    if rank == 0:
        print(json.dumps({"program": "py-fsdp2", "device": str(device), "world_size": world, "parameters": params,
                          "tokens_per_s": world * a.batch_size * a.seq_len * a.steps / seconds,
                          "s_per_step": seconds / a.steps, "peak_allocated_bytes": peak,
                          "last_loss": float(loss.detach())}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
