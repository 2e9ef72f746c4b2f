"""Makes the tokenizer test data with Python `tokenizers` (no network): a varied corpus, three
byte-level BPE tokenizer.json files trained on it, and what `tokenizers` encodes and decodes.

usage: make_tokenizers.py OUT_DIR [NUM_LINES]
Writes OUT_DIR/corpus.bin and, per tokenizer NAME (gpt2, llama3, gpt2_prefix, unk):
OUT_DIR/NAME/tokenizer.json, OUT_DIR/NAME/ids.txt (one line of ids per corpus entry, special
tokens added) and OUT_DIR/NAME/decoded.bin (decode(ids) of each line).
.bin files are records "<byte length>\n<bytes>\n".
"""
import json
import os
import random
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

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


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    os.makedirs(out, exist_ok=True)
    lines = corpus(n, ["<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>"])
    write_records(os.path.join(out, "corpus.bin"), lines)
    for name, make in (("gpt2", gpt2), ("llama3", llama3), ("gpt2_prefix", gpt2_prefix), ("unk", unk)):
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


if __name__ == "__main__":
    main()
