"""The peer of the llama benchmark: a full fine-tune step of the same Llama in PyTorch + transformers.

  torch_llama.py <steps> <batch> <seq_len> <threads>

A plain loop (AdamW, summed token loss divided by the token count, as shardkit's trainer does)
on random tokens; prints one JSON line with the median seconds per step after one warm-up step
and tokens/s. The model is STACK-FACTS' 74.9 M-parameter Llama (hidden 768, 8 layers, 12 heads,
4 key/value heads, ffn 2048, vocab 32000, tied).
"""
import json
import statistics
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

SIZES = dict(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=8,
             num_attention_heads=12, num_key_value_heads=4, tie_word_embeddings=True)


def main(steps, batch, seq_len, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**SIZES))
    model.train()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, SIZES["vocab_size"], (batch, seq_len))
    times = []
    for step in range(steps + 1):
        start = time.perf_counter()
        logits = model(input_ids=ids).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)).float(),
                                                 ids[:, 1:].reshape(-1), reduction="sum") / (batch * (seq_len - 1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step > 0:
            times.append(time.perf_counter() - start)
    s = statistics.median(times)
    print(json.dumps({"peer": "pytorch+transformers", "parameters": params, "s_per_step": s,
                      "tokens_per_s": batch * seq_len / s}))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:5]))
