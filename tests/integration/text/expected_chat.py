"""What chat SFT should produce for a messages dataset, computed with the real TRL SFTTrainer.

usage: expected_chat.py MODEL_DIR DATA_FILE SEQ_LEN MODE OUT.json [TEMPLATE [SAVED_DIR]]
MODEL_DIR holds tokenizer.json and tokenizer_config.json (with a chat_template). TEMPLATE chatml or
zephyr loads the tokenizer as AITraining's get_tokenizer does for --chat-template chatml|zephyr (its
special tokens added, its template set). SAVED_DIR: a tokenizer folder that must load as that same
tokenizer (vocabulary, special tokens, template), else the script fails. DATA_FILE is a .jsonl
file whose lines each have a `messages` list. MODE:
  all         TRL SFTTrainer, assistant_only_loss=False: labels = input_ids.
  generation  TRL SFTTrainer, assistant_only_loss=True ({% generation %} template): TRL's labels.
  markers     input_ids from TRL SFTTrainer (assistant_only_loss=False, untruncated); labels from an
              independent implementation of AITraining's response-marker rule (add_completion_mask),
              markers without their trailing space as shardkit matches them, then cut to SEQ_LEN
              (keep start).
Examples whose labels are all -100 are left out, as TRL leaves them out. Writes
{"vocab_size" (len(tokenizer)), "pad_id", "input_ids", "labels" (unpadded, per kept example), "dropped" (input indices left out; omitted
where they cannot be determined), "texts" (apply_chat_template(tokenize=False) of kept examples;
omitted with "dropped")}.
The trainer gets a tiny random LlamaForCausalLM and never trains.
"""
import json
import sys
import tempfile

import datasets
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
from trl import SFTConfig, SFTTrainer

IGNORE = -100
PROBE_TWO = [{"role": "user", "content": "test"}, {"role": "assistant", "content": "response"}]
PROBE_ONE = [{"role": "user", "content": "test"}]


# AITraining's ChatmlSpecialTokens and ZephyrSpecialTokens, and its templates for them.
AITRAINING_TOKENS = {
    "chatml": dict(pad_token="<pad>", bos_token="<s>", eos_token="<|im_end|>",
                   additional_special_tokens=["<|im_start|>user", "<|im_start|>assistant", "<|im_start|>system",
                                              "<|im_end|>", "<s>", "<pad>"]),
    "zephyr": dict(pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                   additional_special_tokens=["<|user|>", "<|assistant|>", "<|system|>", "</s>", "<s>", "<pad>"]),
}
AITRAINING_TEMPLATES = {
    "chatml": "{% for message in messages %}\n{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
              "'<|im_end|>' + '\n'}}{% if loop.last and add_generation_prompt %}{{'<|im_start|>assistant\n' }}"
              "{% endif %}{% endfor %}",
    "zephyr": "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + "
              "message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + "
              "message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + "
              "message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n"
              "{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
}


def aitraining_tokenizer(model_dir, template):
    """As AITraining's get_tokenizer (src/autotrain/trainers/clm/utils.py) with chat_template=`template`."""
    tok = AutoTokenizer.from_pretrained(model_dir, **AITRAINING_TOKENS[template])
    tok.chat_template = AITRAINING_TEMPLATES[template]
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def check_same_tokenizer(saved_dir, want):
    got = AutoTokenizer.from_pretrained(saved_dir)
    problems = [what for what, a, b in (
        ("vocabulary", got.get_vocab(), want.get_vocab()),
        ("special tokens", sorted(got.all_special_tokens), sorted(want.all_special_tokens)),
        ("bos/eos/pad", (got.bos_token, got.eos_token, got.pad_token), (want.bos_token, want.eos_token, want.pad_token)),
        ("chat template", got.chat_template, want.chat_template),
        ("length", len(got), len(want))) if a != b]
    if problems:
        sys.exit(f"{saved_dir} does not load as AITraining's tokenizer: {', '.join(problems)} differ")


def read_conversations(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["messages"] for line in f if line.strip()]


def tiny_model(vocab_size):
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096)
    return LlamaForCausalLM(config)


def trl_dataset(tok, conversations, max_length, assistant_only_loss):
    """The train_dataset TRL prepares: columns input_ids and labels, fully masked examples dropped."""
    with tempfile.TemporaryDirectory() as out_dir:
        args = SFTConfig(output_dir=out_dir, max_length=max_length, assistant_only_loss=assistant_only_loss,
                         report_to=[], packing=False, dataset_num_proc=None, use_cpu=True, bf16=False)
        train = datasets.Dataset.from_list([{"messages": m} for m in conversations])
        trainer = SFTTrainer(model=tiny_model(len(tok)), args=args, train_dataset=train, processing_class=tok)
        return trainer.train_dataset["input_ids"], trainer.train_dataset["labels"]


def kept_indices(tok, conversations, seq_len, kept_ids):
    """Input indices of the examples TRL kept, by matching their ids in order; None if they do not match."""
    kept, k = [], 0
    for i, messages in enumerate(conversations):
        ids = tok.apply_chat_template(messages, tokenize=True, return_dict=True)["input_ids"][:seq_len]
        if k < len(kept_ids) and kept_ids[k] == ids:
            kept.append(i)
            k += 1
    return kept if k == len(kept_ids) else None


def newlines_after(sample, prefix):
    rest = sample[sample.index(prefix) + len(prefix):]
    return "\n" * max(1, len(rest) - len(rest.lstrip("\n")))


def response_marker(tok):
    sample = tok.apply_chat_template(PROBE_TWO, tokenize=False, add_generation_prompt=False)
    if "<start_of_turn>model\n" in sample:
        return "<start_of_turn>model\n"
    header = "<|start_header_id|>assistant<|end_header_id|>"
    if header in sample:
        return header + ("\n\n" if header + "\n\n" in sample else "\n")
    if "<|im_start|>assistant" in sample:
        return "<|im_start|>assistant" + newlines_after(sample, "<|im_start|>assistant")
    if "[/INST]" in sample:
        return "[/INST] "
    if "<|assistant|>" in sample:
        return "<|assistant|>" + newlines_after(sample, "<|assistant|>")
    return None


def end_of_turn(tok):
    sample = tok.apply_chat_template(PROBE_ONE, tokenize=False, add_generation_prompt=False)
    for end, opener in (("<end_of_turn>", "<start_of_turn>"), ("<|eot_id|>", "<|start_header_id|>"),
                        ("<|im_end|>", "<|im_start|>"), ("<|end|>", "<|user|>")):
        if end in sample and opener in sample:
            return end
    two = tok.apply_chat_template(PROBE_TWO, tokenize=False, add_generation_prompt=False)
    eos = tok.eos_token
    if eos and "response" in two and eos in two[two.index("response") + len("response"):]:
        return eos
    return None


def marker_mask(ids, base_ids, newline_ids, end_ids):
    """1 on each response: after every base marker (and the newline tokens that follow it) through the
    next end-of-turn tokens inclusive, or to the end when there is no end of turn."""
    mask, i, n = [0] * len(ids), 0, len(ids)
    while i < n:
        if ids[i:i + len(base_ids)] != base_ids:
            i += 1
            continue
        i += len(base_ids)
        while i < n and ids[i] in newline_ids:
            i += 1
        while i < n:
            if end_ids and ids[i:i + len(end_ids)] == end_ids:
                mask[i:i + len(end_ids)] = [1] * len(end_ids)
                i += len(end_ids)
                break
            mask[i] = 1
            i += 1
    return mask


def marker_labels(tok, all_ids):
    marker, end = response_marker(tok), end_of_turn(tok)
    if marker is None:
        print("expected_chat.py: no response marker in the chat template; every label is -100", file=sys.stderr)
        return [[IGNORE] * len(ids) for ids in all_ids]

    def encode(text):
        return tok.encode(text, add_special_tokens=False)

    # Without its trailing space, as shardkit matches markers (docs/llm.md): AITraining's literal
    # "[/INST] " is the tokens "[/INST]" "▁" with a Metaspace tokenizer, which miss an answer whose
    # first word took the space ("▁The"), and that answer would go untrained.
    base_ids = encode(marker.rstrip("\n").rstrip(" "))
    newline_ids = {ids[0] for ids in map(encode, ("\n", "\n\n", "\n\n\n")) if len(ids) == 1}
    end_ids = encode(end) if end is not None else None
    return [[t if m else IGNORE for t, m in zip(ids, marker_mask(ids, base_ids, newline_ids, end_ids))]
            for ids in all_ids]


def markers_examples(tok, conversations, seq_len):
    all_ids, _ = trl_dataset(tok, conversations, None, assistant_only_loss=False)
    if len(all_ids) != len(conversations):
        raise RuntimeError("TRL dropped examples without max_length; cannot line them up")
    examples = [(i, ids[:seq_len], labels[:seq_len])
                for i, (ids, labels) in enumerate(zip(all_ids, marker_labels(tok, all_ids)))]
    return [e for e in examples if any(label != IGNORE for label in e[2])]


def trl_examples(tok, conversations, seq_len, assistant_only_loss):
    ids, labels = trl_dataset(tok, conversations, seq_len, assistant_only_loss)
    indices = kept_indices(tok, conversations, seq_len, ids) or [None] * len(ids)
    return list(zip(indices, ids, labels))


def result_of(tok, conversations, examples):
    result = {"input_ids": [list(ids) for _, ids, _ in examples], "labels": [list(lab) for _, _, lab in examples]}
    indices = [i for i, _, _ in examples]
    if None in indices:
        print("expected_chat.py: cannot tell which examples TRL dropped; no dropped/texts", file=sys.stderr)
        return result
    result["dropped"] = sorted(set(range(len(conversations))) - set(indices))
    result["texts"] = [tok.apply_chat_template(conversations[i], tokenize=False) for i in indices]
    return result


def main():
    model_dir, data_file, seq_len, mode, out = sys.argv[1:6]
    template = sys.argv[6] if len(sys.argv) > 6 else None
    seq_len = int(seq_len)
    datasets.disable_progress_bars()
    tok = aitraining_tokenizer(model_dir, template) if template else AutoTokenizer.from_pretrained(model_dir)
    if len(sys.argv) > 7:
        check_same_tokenizer(sys.argv[7], tok)
    conversations = read_conversations(data_file)
    if mode == "markers":
        examples = markers_examples(tok, conversations, seq_len)
    elif mode in ("all", "generation"):
        examples = trl_examples(tok, conversations, seq_len, assistant_only_loss=mode == "generation")
    else:
        sys.exit(f"unknown MODE {mode!r} (all, generation or markers)")
    result = result_of(tok, conversations, examples)
    result.update(vocab_size=len(tok), pad_id=tok.pad_token_id)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
