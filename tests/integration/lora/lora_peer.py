"""PEFT's side of the LoRA tests: loads shardkit's adapter folders with peft and computes logits.

  lora_peer.py peft <base folder> <adapter folder> <out.safetensors>
  lora_peer.py merged <merged folder> <out.safetensors>

`peft` loads the base with transformers, then `PeftModel.from_pretrained(base, <adapter folder>)`,
and fails unless every tensor of adapter_model.safetensors landed in the model (equal values) and
every LoRA parameter of the model came from the file; it writes llama_peer.py's batch with PEFT's
logits. `merged` loads a merged full-weight folder with transformers strictly and writes its logits.
"""
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "llama"))
from llama_peer import batch  # noqa: E402


def logits_of(model, out, what):
    model.eval()
    ids, mask, labels = batch()
    with torch.no_grad():
        result = model(input_ids=ids, attention_mask=mask)
    save_file({"input_ids": ids, "attention_mask": mask, "labels": labels,
               "logits": result.logits.float().contiguous()}, out)
    print(what)


def peft(base, adapter, out):
    from peft import PeftModel
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    model = PeftModel.from_pretrained(model, adapter)
    saved = load_file(os.path.join(adapter, "adapter_model.safetensors"))
    params = dict(model.named_parameters())
    used = set()
    for key, tensor in saved.items():
        if ".lora_A." in key or ".lora_B." in key:
            name = key.replace(".weight", ".default.weight")
        else:  # modules_to_save: PEFT trains a copy under modules_to_save.default
            name = key[: -len(".weight")] + ".modules_to_save.default.weight"
        if name not in params:
            sys.exit(f"{key} of adapter_model.safetensors has no parameter {name} in the PeftModel")
        if not torch.equal(params[name].detach(), tensor):
            sys.exit(f"{key}: the PeftModel's {name} differs from the file")
        used.add(name)
    lora = {n for n in params if ".lora_A." in n or ".lora_B." in n or ".modules_to_save." in n}
    if lora != used:
        sys.exit(f"LoRA parameters of the PeftModel not in the file: {sorted(lora - used)}")
    logits_of(model, out, f"peft loaded {len(saved)} adapter tensors from {adapter} onto {base}")


def merged(folder, out):
    model, info = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    if problems:
        sys.exit(f"transformers did not load {folder} strictly: {problems}")
    logits_of(model, out, f"transformers loaded the merged {folder} strictly")


if __name__ == "__main__":
    if sys.argv[1] == "peft":
        peft(*sys.argv[2:5])
    elif sys.argv[1] == "merged":
        merged(*sys.argv[2:4])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
