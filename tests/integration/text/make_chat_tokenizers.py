"""Makes small chat tokenizer folders (tokenizer.json + tokenizer_config.json with a chat_template)
with Python `tokenizers` (no network), for the chat-SFT tests.

usage: make_chat_tokenizers.py OUT_DIR CORPUS_LINES
Writes, each a BPE tokenizer trained on a deterministic generated English corpus of CORPUS_LINES
lines, byte-level (ByteLevel pre-tokenizer without prefix space, ByteLevel decoder, no normalizer)
unless said otherwise:
  OUT_DIR/llama3_chat        llama3.jinja; bos <|begin_of_text|> (added by the post-processor),
                             eos <|eot_id|>, pad <|end_of_text|>
  OUT_DIR/llama3_generation  the same with llama3_generation.jinja ({% generation %} blocks)
  OUT_DIR/chatml             qwen2_5.jinja; no bos, eos <|im_end|>, pad <|endoftext|>
  OUT_DIR/zephyr             zephyr.jinja; bos <s>, eos </s>, pad </s>, special <|user|> <|assistant|> <|system|>
  OUT_DIR/mistral            mistral_v0_3.jinja; sentencepiece-style as Mistral v0.3's file (Metaspace with
                             prepend_scheme "first", byte fallback, <0xXX> byte tokens); bos <s>, eos </s>,
                             pad </s>, special [INST] [/INST]
The templates are read from tests/data/chat-templates/.
"""
import json
import os
import random
import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

BYTE_TOKENS = ["<0x%02X>" % b for b in range(256)]

TEMPLATES = Path(__file__).resolve().parents[2] / "data" / "chat-templates"
LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]

SUBJECTS = ["the user", "the assistant", "a model", "the system", "my friend", "this shard", "the tokenizer",
            "a response"]
VERBS = ["answers", "writes", "reads", "explains", "trains", "asks about", "checks", "returns", "helps with"]
OBJECTS = ["the question", "a short story", "the weather today", "gradient descent", "a test", "the answer",
           "three apples", "Paris and London", "the next step", "a long list of words", "your message"]
TAILS = [".", "!", "?", ", please.", " again.", " for me.", " in English."]


def corpus(n, seed=2024):
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        sentences = [rng.choice(SUBJECTS).capitalize() + " " + rng.choice(VERBS) + " " + rng.choice(OBJECTS)
                     + rng.choice(TAILS) for _ in range(rng.randint(1, 4))]
        sep = "\n\n" if i % 5 == 0 else ("\n" if i % 3 == 0 else " ")
        lines.append(sep.join(sentences))
    return lines


def byte_level_bpe(lines, specials, vocab_size=1200):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                                       show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def add_llama3_post_processor(tok):
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)])])


def mistral_bpe(lines, specials, vocab_size=1200):
    """As transformers' LlamaConverter (legacy=False) makes Mistral v0.3's tokenizer.json."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials + BYTE_TOKENS,
                                                       limit_alphabet=80, show_progress=False))
    spec = json.loads(tok.to_str())
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] not in BYTE_TOKENS]
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1, right=0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return tok


def write_folder(folder, tok, template, bos, eos, pad):
    os.makedirs(folder, exist_ok=True)
    tok.save(os.path.join(folder, "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": bos, "eos_token": eos, "pad_token": pad,
              "model_max_length": 1000000, "chat_template": (TEMPLATES / template).read_text(encoding="utf-8")}
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    lines = corpus(n)
    llama3 = byte_level_bpe(lines, LLAMA3_SPECIALS)
    add_llama3_post_processor(llama3)
    for name, template in (("llama3_chat", "llama3.jinja"), ("llama3_generation", "llama3_generation.jinja")):
        write_folder(os.path.join(out, name), llama3, template, "<|begin_of_text|>", "<|eot_id|>", "<|end_of_text|>")
    chatml = byte_level_bpe(lines, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    write_folder(os.path.join(out, "chatml"), chatml, "qwen2_5.jinja", None, "<|im_end|>", "<|endoftext|>")
    zephyr = byte_level_bpe(lines, ["<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"])
    write_folder(os.path.join(out, "zephyr"), zephyr, "zephyr.jinja", "<s>", "</s>", "</s>")
    mistral = mistral_bpe(lines, ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"])
    write_folder(os.path.join(out, "mistral"), mistral, "mistral_v0_3.jinja", "<s>", "</s>", "</s>")


if __name__ == "__main__":
    main()
