"""The language-model fine-tuning test's files, made by the Python peers (no network).

lm_fixture.py make DIR   -> DIR/model (a tokenizer trained by `tokenizers`, saved by transformers
                            with a chat template: tokenizer.json, tokenizer_config.json and
                            chat_template.jinja; a tiny random Llama saved by transformers) and
                            DIR/data.jsonl (400 documents)
lm_fixture.py load DIR   -> loads DIR (a shardkit checkpoint's pretrained_model) with transformers,
                            strictly, and its tokenizer with PreTrainedTokenizerFast; prints the
                            mean loss of the first 8 documents of data.jsonl-style text
lm_fixture.py bf16 DIR   -> DIR/model-bf16: DIR/model saved again in bfloat16 (a base whose dtype a
                            merged model keeps)
lm_fixture.py chat DIR.. -> for each DIR, AutoTokenizer.from_pretrained(DIR).apply_chat_template of
                            one conversation (as text), as a JSON list; a folder whose tokenizer
                            has no chat template gives an error text instead
"""
import json
import os
import random
import sys

CHAT_TEMPLATE = ("{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}<|endoftext|>"
                 "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
CONVERSATION = [{"role": "user", "content": "pour the water"}, {"role": "assistant", "content": "into the cup"}]

WORDS = ("the quick brown fox jumps over a lazy dog while robots learn to grasp cubes and pour water "
         "from one cup into another").split()


def make(root):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30))) for _ in range(400)]
    with open(os.path.join(root, "data.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps({"text": line}) + "\n")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model_dir = os.path.join(root, "model")
    os.makedirs(model_dir, exist_ok=True)
    # transformers 5 saves the chat template as chat_template.jinja beside tokenizer.json.
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(model_dir)
    if not os.path.isfile(os.path.join(model_dir, "chat_template.jinja")):
        sys.exit("transformers did not write chat_template.jinja")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128, tie_word_embeddings=True,
                         eos_token_id=tok.token_to_id("<|endoftext|>"), bos_token_id=None)
    LlamaForCausalLM(config).save_pretrained(model_dir)


def load(folder):
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    model, info = AutoModelForCausalLM.from_pretrained(folder, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v}
    if bad:
        sys.exit(f"transformers did not load {folder} strictly: {bad}")
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(folder, "tokenizer.json"))
    rng = random.Random(1)
    texts = [" ".join(rng.choice(WORDS) for _ in range(20)) for _ in range(8)]
    ids = torch.tensor([tok(t)["input_ids"][:16] for t in texts])
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.item()
    print(json.dumps({"loss": loss}))


def bf16(root):
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    target = os.path.join(root, "model-bf16")
    shutil.copytree(os.path.join(root, "model"), target)
    AutoModelForCausalLM.from_pretrained(os.path.join(root, "model")).to(torch.bfloat16).save_pretrained(target)


def chat(folders):
    from transformers import AutoTokenizer

    out = []
    for folder in folders:
        try:
            out.append(AutoTokenizer.from_pretrained(folder).apply_chat_template(CONVERSATION, tokenize=False))
        except ValueError as e:  # no chat template
            out.append(f"error: {e}")
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "chat":
        chat(sys.argv[2:])
    else:
        {"make": make, "load": load, "bf16": bf16}[sys.argv[1]](sys.argv[2])
