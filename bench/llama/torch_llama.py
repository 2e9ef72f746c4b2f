"""The peer of the llama benchmark: a fine-tune step of the same Llama in PyTorch + transformers.

  torch_llama.py <steps> <batch> <seq_len> <threads> [full|lora]
  torch_llama.py --save <folder>        (writes the model as a Hugging Face folder for shardkit's LoRA run)

A plain loop (AdamW, transformers' own causal-LM loss: the mean token cross-entropy, what
shardkit's trainer computes as a sum divided by the token count) on random tokens; prints one JSON line with the median seconds per step after one warm-up step
and tokens/s (of the whole cluster). The model is STACK-FACTS' 74.9 M-parameter Llama (hidden
768, 8 layers, 12 heads, 4 key/value heads, ffn 2048, vocab 32000, tied). `lora` trains PEFT LoRA
adapters (r 16, alpha 32, dropout 0) on every linear layer but lm_head, the base frozen: what
shardkit's `--peft.r=16 --peft.lora_alpha=32 --peft.target_modules=all-linear` does.

Started by torchrun (WORLD_SIZE > 1), each process trains its own batch under
DistributedDataParallel over Gloo, as shardkit-run + shardkit-train's ddp do; with
BENCH_CPU_BIND=1 each pins itself to its share of the CPUs, as shardkit-run --cpu-bind=cores.
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from transformers import LlamaConfig, LlamaForCausalLM

SIZES = dict(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=8,
             num_attention_heads=12, num_key_value_heads=4, tie_word_embeddings=True)


def make_model():
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**SIZES))


def main(steps, batch, seq_len, threads, mode="full"):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1 and os.environ.get("BENCH_CPU_BIND") == "1":  # as shardkit-run --cpu-bind=cores
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ddp"))
        from torch_ddp_mlp import bind_cpus
        bind_cpus()
    torch.set_num_threads(threads)
    if world > 1:
        dist.init_process_group("gloo")
    model = make_model()
    params = sum(p.numel() for p in model.parameters())
    if mode == "lora":
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear",
                                                 task_type="CAUSAL_LM"))
    elif mode != "full":
        sys.exit(f"mode must be full or lora, not {mode!r}")
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    model.train()
    step_model = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    torch.manual_seed(1 + rank)
    ids = torch.randint(0, SIZES["vocab_size"], (batch, seq_len))
    times = []
    for step in range(steps + 1):
        start = time.perf_counter()
        # transformers' own loss (what a user of it runs): the mean token cross-entropy of the shifted
        # labels, over the same batch * (seq_len - 1) predictions that shardkit's trainer divides by.
        loss = step_model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step > 0:
            times.append(time.perf_counter() - start)
    s = statistics.median(times)
    if rank == 0:
        print(json.dumps({"peer": "pytorch+transformers" + ("+peft" if mode == "lora" else ""), "mode": mode,
                          "ranks": world, "parameters": params, "trainable": trainable, "s_per_step": s,
                          "tokens_per_s": world * batch * seq_len / s}))
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    if sys.argv[1] == "--save":
        make_model().save_pretrained(sys.argv[2])
    else:
        main(*(int(a) for a in sys.argv[1:5]), *sys.argv[5:6])
