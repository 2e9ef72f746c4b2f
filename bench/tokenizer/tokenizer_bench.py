"""Tokens per second of Python `tokenizers` (encode_batch), the peer of bench_tokenizer.

usage: RAYON_NUM_THREADS=N tokenizer_bench.py TOKENIZER_DIR CORPUS.bin THREADS [REPEATS]
"""
import json
import sys
import time

from tokenizers import Tokenizer


def records(path):
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        nl = data.index(b"\n", at)
        n = int(data[at:nl])
        out.append(data[nl + 1:nl + 1 + n].decode("utf-8"))
        at = nl + 1 + n + 1
    return out


def main():
    tok_dir, corpus, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    texts = records(corpus)
    t0 = time.perf_counter()
    tok = Tokenizer.from_file(tok_dir + "/tokenizer.json")
    load_s = time.perf_counter() - t0
    best, tokens = 1e30, 0
    for _ in range(repeats):
        start = time.perf_counter()
        encodings = tok.encode_batch_fast(texts) if hasattr(tok, "encode_batch_fast") else tok.encode_batch(texts)
        best = min(best, time.perf_counter() - start)
        tokens = sum(len(e.ids) for e in encodings)
    print(json.dumps({"impl": "tokenizers", "threads": threads, "lines": len(texts), "tokens": tokens,
                      "seconds": round(best, 4), "tokens_per_s": round(tokens / best), "load_s": round(load_s, 3)}))


if __name__ == "__main__":
    main()
