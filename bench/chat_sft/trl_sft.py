"""The peer side of the chat SFT benchmark: transformers + TRL 1.16's SFTTrainer on the same
model folder, conversations and batch as shardkit-train, on the CPU.

usage: trl_sft.py MODEL_DIR CHAT_JSONL MAX_LEN BATCH STEPS THREADS {full|lora}
Prints one JSON line: the median seconds per optimizer step after the first, and the tokens/s
of the real (not padding) tokens those steps trained on (wall time from the step's start to its
end, data collation included). SFTTrainer renders each conversation with the tokenizer's chat
template and trains on every token (assistant_only_loss needs {% generation %} blocks, which
this template lacks; shardkit runs with --dataset.response_only_loss=false alike: the compute is
the same either way), pads each batch to its longest row (shardkit pads to MAX_LEN), AdamW lr
1e-4, constant, fp32. lora: PEFT LoRA r 16, alpha 32, dropout 0, on every linear layer but
lm_head (shardkit's --peft.target_modules=all-linear).
"""
import json
import statistics
import sys
import tempfile
import time

import datasets
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import SFTConfig, SFTTrainer


class StepClock(TrainerCallback):
    """Wall time of each optimizer step, and the real tokens of each step's batch."""

    def __init__(self):
        self.times, self.start = [], None

    def on_step_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.times.append(time.perf_counter() - self.start)


def main():
    model_dir, data, max_len, batch, steps, threads, mode = sys.argv[1:8]
    max_len, batch, steps, threads = int(max_len), int(batch), int(steps), int(threads)
    torch.set_num_threads(threads)
    datasets.disable_progress_bars()
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    peft_config = None
    if mode == "lora":
        from peft import LoraConfig
        peft_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear",
                                 task_type="CAUSAL_LM")
    with open(data, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    clock = StepClock()
    tokens = []

    class CountingTrainer(SFTTrainer):
        def training_step(self, model, inputs, *args, **kwargs):
            tokens.append(int(inputs["attention_mask"].sum()) if "attention_mask" in inputs
                          else int(inputs["input_ids"].numel()))
            return super().training_step(model, inputs, *args, **kwargs)

    with tempfile.TemporaryDirectory() as out:
        args = SFTConfig(output_dir=out, max_length=max_len, per_device_train_batch_size=batch, max_steps=steps,
                         learning_rate=1e-4, logging_steps=steps, save_strategy="no", report_to=[], use_cpu=True,
                         bf16=False, packing=False, dataset_num_proc=None, dataloader_num_workers=0,
                         lr_scheduler_type="constant", warmup_steps=0, seed=3)
        trainer = CountingTrainer(model=model, args=args, train_dataset=datasets.Dataset.from_list(rows),
                                  processing_class=tok, peft_config=peft_config, callbacks=[clock])
        trainer.train()
    times, counted = clock.times[1:], tokens[1:len(clock.times)]
    s = statistics.median(times)
    print(json.dumps({"peer": f"transformers+TRL {mode}", "s_per_step": s,
                      "tokens_per_s": sum(counted) / sum(times), "steps": len(times)}))


if __name__ == "__main__":
    main()
