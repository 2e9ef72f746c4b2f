"""Makes the tokenizer test data with Python `tokenizers` (no network): a varied corpus, BPE
tokenizer.json files trained on it, and what `tokenizers` encodes and decodes.

The tokenizers are built as each family's files are (none can be downloaded): GPT-2 and Llama 3
(byte-level), Qwen2 (NFC + byte-level, as transformers' Qwen2Converter), Llama 2 (sentencepiece as
BPE with byte fallback, legacy: Prepend + Replace normalizers, as LlamaConverter), Mistral v0.3 /
non-legacy Llama (Metaspace with prepend_scheme "first"), Gemma (Replace normalizer, Split merged
with the previous piece, as GemmaConverter), and three that exercise the remaining parts: NFKC +
Lowercase + Strip + a regex Replace; NFD + Metaspace splitting with the Metaspace decoder; and the
Split behaviours Contiguous, MergedWithNext and MergedWithPrevious.

usage: make_tokenizers.py OUT_DIR [NUM_LINES]
Writes OUT_DIR/corpus.bin and, per tokenizer NAME: OUT_DIR/NAME/tokenizer.json, OUT_DIR/NAME/ids.txt
(one line of ids per corpus entry, special tokens added), OUT_DIR/NAME/decoded.bin (decode(ids) of
each line) and OUT_DIR/NAME/decoded_half.bin (decode of the first half of each line's ids, special
tokens skipped: cut byte-fallback characters and lone word starts).
.bin files are records "<byte length>\n<bytes>\n".
"""
import json
import os
import random
import sys

from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors,
                        trainers)

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = ("the quick brown fox jumps over lazy dog distributed training shard gradient tokenizer model "
         "Hello World Python Rust C++ LibTorch token byte pair encoding merges vocabulary").split()
CONTRACTIONS = ["don't", "it's", "we're", "I've", "I'm", "they'll", "he'd", "IT'S", "You'RE", "can't", "o'clock",
                "'s", "'ll"]
SCRIPTS = ["你好世界", "日本語のテキストです", "한국어 문장", "مرحبا بالعالم", "Привет, мир!", "Ελληνικά",
           "café naïve résumé", "e\u0301te\u0301", "नमस्ते दुनिया", "สวัสดีครับ", "עברית", "Ǆemal", "straße",
           "ﬁne ligature", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "Zürich", "ÅNGSTRÖM"]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇫🇷", "🤖🤖🤖", "☕", "1️⃣"]
DIGITS = ["1234567", "3.14159", "2024-01-01", "0", "42", "1,000,000", "٣٤٥", "१२३", "½", "x²", "10e-3"]
SPACES = ["   ", "\t", "\t\t", "  \n  ", "\r\n", "\n\n\n", " \u00a0 ", "\u3000", "\u2028", "\u0085", " \t \n"]
PUNCT = ["!!!", "...", "—", "«guillemets»", "(parens)", "{braces}", "[x]", "#hash", "@user", "a_b_c", "snake_case",
         "https://example.com/a?b=c&d=e", "C:\\path\\to", "<html>", "</div>", "| pipes |", "~/.cache"]
CODE = ["def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
        "if x:\n        pass", "SELECT * FROM t WHERE id = 7;"]


def corpus(n, specials, seed=1234):
    rng = random.Random(seed)
    pools = [WORDS, WORDS, WORDS, CONTRACTIONS, SCRIPTS, EMOJI, DIGITS, SPACES, PUNCT, CODE]
    extras = specials + ["<|end", "|>", "<|", "<tool>", "shardkit", "shardkits", "xshardkit"]
    lines = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(1, 14)):
            pool = extras if rng.random() < 0.06 else rng.choice(pools)
            parts.append(rng.choice(pool))
        seps = [" ", " ", " ", "", "\n", "\t", "  "]
        text = parts[0]
        for p in parts[1:]:
            text += rng.choice(seps) + p
        if i % 97 == 0:
            text = " " * rng.randint(1, 5) + text + " " * rng.randint(0, 5)
        if i % 211 == 0:
            text = rng.choice(DIGITS) * rng.randint(3, 30)
        if i % 307 == 0:
            text = "\n" * rng.randint(1, 4) + text
        lines.append(text)
    lines.append("")  # an empty text: no ids besides the template's
    lines.append(" " * 300 + "x")  # a long whitespace run before a word (lookahead backtracking)
    return lines


def write_records(path, texts):
    with open(path, "wb") as f:
        for t in texts:
            b = t.encode("utf-8")
            f.write(b"%d\n" % len(b) + b + b"\n")


def train(tok, lines, vocab_size, specials):
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(lines, trainer)


def gpt2(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    train(tok, lines, 2000, ["<|endoftext|>"])
    return tok


def llama3(lines):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    train(tok, lines, 3000, ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>"])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    return tok


def gpt2_prefix(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    train(tok, lines, 1500, ["<|endoftext|>"])
    tok.add_tokens([AddedToken("<tool>", lstrip=True, rstrip=True, normalized=False, special=False),
                    AddedToken("shardkit", single_word=True, normalized=True, special=False)])
    return tok


def unk(lines):
    # Not byte-level: raw characters, a small alphabet so rare ones become <unk> (fused), and
    # whitespace removed by a Split.
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"\s+"), behavior="removed")
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=800, special_tokens=["<unk>", "<|endoftext|>"],
                                                       limit_alphabet=60, show_progress=False))
    return tok


QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
BYTE_TOKENS = ["<0x%02X>" % b for b in range(256)]
SPM = "\u2581"  # sentencepiece's word marker


def qwen2(lines):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    train(tok, lines, 3000, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return tok


def sentencepiece_bpe(lines, specials, train_pre_tokenizer, vocab_size=2500):
    """A sentencepiece-like BPE vocabulary: special tokens first, then the 256 <0xXX> byte tokens
    (ordinary vocabulary entries, not added tokens), word pieces starting with U+2581."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = train_pre_tokenizer
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials + BYTE_TOKENS,
                                                       limit_alphabet=120, show_progress=False))
    return tok


def reshape(tok, edit):
    """`tok` saved, its JSON changed by `edit`, and loaded again (parts the Python API cannot set
    after training, such as byte tokens that are vocabulary rather than added tokens)."""
    spec = json.loads(tok.to_str())
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] not in BYTE_TOKENS]
    edit(spec)
    return Tokenizer.from_str(json.dumps(spec, ensure_ascii=False))


def spm_template(tok, bos):
    return processors.TemplateProcessing(single=bos + " $A", pair=bos + " $A " + bos + " $B",
                                         special_tokens=[(bos, tok.token_to_id(bos))])


def llama_decoder(strip):
    steps = [decoders.Replace(SPM, " "), decoders.ByteFallback(), decoders.Fuse()]
    return decoders.Sequence(steps + [decoders.Strip(content=" ", left=1, right=0)] if strip else steps)


def llama2(lines):
    # transformers' LlamaConverter with legacy=True: no pre-tokenizer, the whole text one word.
    tok = sentencepiece_bpe(lines, ["<unk>", "<s>", "</s>"], pre_tokenizers.Metaspace(prepend_scheme="always"))
    tok = reshape(tok, lambda s: s.update(pre_tokenizer=None))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(SPM), normalizers.Replace(" ", SPM)])
    tok.decoder = llama_decoder(strip=True)
    tok.post_processor = spm_template(tok, "<s>")
    return tok


def mistral(lines):
    # LlamaConverter with legacy=False (Mistral v0.3, newer Llama 2 files): Metaspace, prefix on
    # the first piece only, no split; control tokens as special added tokens.
    tok = sentencepiece_bpe(lines, ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"],
                            pre_tokenizers.Metaspace(prepend_scheme="first"))
    tok = reshape(tok, lambda s: s.update(pre_tokenizer=None))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPM, prepend_scheme="first", split=False)
    tok.decoder = llama_decoder(strip=True)
    tok.post_processor = spm_template(tok, "<s>")
    return tok


def gemma(lines):
    # GemmaConverter: spaces replaced by the normalizer, a Split on " " merged with the previous
    # piece (it finds no space left), no prefix.
    tok = sentencepiece_bpe(lines, ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"],
                            pre_tokenizers.Metaspace(prepend_scheme="never"))
    tok = reshape(tok, lambda s: s.update(pre_tokenizer=None))
    tok.normalizer = normalizers.Replace(" ", SPM)
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tok.decoder = llama_decoder(strip=False)
    tok.post_processor = spm_template(tok, "<bos>")
    return tok


def nfkc_lower(lines):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.Strip(left=True, right=True), normalizers.NFKC(),
                                           normalizers.Lowercase(), normalizers.Replace(Regex(r"[0-9]+"), "#")])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    train(tok, lines, 1500, ["<|endoftext|>"])
    # A normalized added token is looked for in lowercased text; a raw one in the text as it is.
    tok.add_tokens([AddedToken("ShardKit", normalized=True, special=False),
                    AddedToken("<tool>", normalized=False, special=False)])
    # A special token matched normalized ("<sep>"): decode(skip_special_tokens=True) keeps it, as
    # the string it decodes from is no special token's content.
    tok.add_special_tokens([AddedToken("<SEP>", normalized=True, special=True)])
    return tok


def nfd_metaspace(lines):
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFD()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPM, prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement=SPM, prepend_scheme="always", split=True)
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>", "</s>"],
                                                       limit_alphabet=200, show_progress=False))
    return tok


def splits(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}"), behavior="contiguous"),
        pre_tokenizers.Split(" ", behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"[.,!?]"), behavior="merged_with_previous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    train(tok, lines, 1500, ["<|endoftext|>"])
    return tok


FAMILIES = (("gpt2", gpt2), ("llama3", llama3), ("gpt2_prefix", gpt2_prefix), ("unk", unk), ("qwen2", qwen2),
            ("llama2", llama2), ("mistral", mistral), ("gemma", gemma), ("nfkc_lower", nfkc_lower),
            ("nfd_metaspace", nfd_metaspace), ("splits", splits))


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    os.makedirs(out, exist_ok=True)
    lines = corpus(n, ["<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>", "<s>", "</s>", "[INST]",
                       "<|im_end|>", "<start_of_turn>", "ShardKit", "<tool>", "<SEP>"])
    write_records(os.path.join(out, "corpus.bin"), lines)
    for name, make in FAMILIES:
        tok = make(lines)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "tokenizer.json")
        tok.save(path)
        spec = json.load(open(path, encoding="utf-8"))
        if name == "llama3":
            assert spec["model"]["ignore_merges"] is True, "ignore_merges did not survive training"
        if name == "gpt2_prefix":  # the older "a b" form of merges
            spec["model"]["merges"] = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
            json.dump(spec, open(path, "w", encoding="utf-8"), ensure_ascii=False)
            tok = Tokenizer.from_file(path)
        encodings = tok.encode_batch(lines)
        with open(os.path.join(folder, "ids.txt"), "w") as f:
            for e in encodings:
                f.write(" ".join(map(str, e.ids)) + "\n")
        write_records(os.path.join(folder, "decoded.bin"),
                      tok.decode_batch([e.ids for e in encodings], skip_special_tokens=False))
        write_records(os.path.join(folder, "decoded_half.bin"),
                      tok.decode_batch([e.ids[:len(e.ids) // 2] for e in encodings], skip_special_tokens=True))


if __name__ == "__main__":
    main()
