"""What the text dataset should produce, computed independently with Python `tokenizers`.

usage: expected_samples.py TOKENIZER_DIR DATA_FILE COLUMN SEQ_LEN PACKING(0|1) OUT.json
Documents: .jsonl lines' COLUMN, .csv rows' COLUMN (csv module), .txt non-empty lines; empty
documents skipped. Each is encoded with special tokens; packing: all documents, each followed
by EOS, cut into SEQ_LEN blocks (the last padded); else one document + EOS per sample, cut to
SEQ_LEN and padded. Writes {"input_ids", "attention_mask", "labels", "pad_id"}.
"""
import csv
import json
import sys

from tokenizers import Tokenizer


def documents(path, column):
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8", newline="") as f:
            docs = [json.loads(line)[column] for line in f if line.strip(" \t\r\n")]
    elif path.endswith(".csv"):
        with open(path, encoding="utf-8", newline="") as f:
            docs = [row[column] for row in csv.DictReader(f)]
    else:
        with open(path, encoding="utf-8", newline="") as f:
            docs = [line.rstrip("\r") for line in f.read().split("\n")]
    return [d for d in docs if d]


def main():
    tok_dir, path, column, seq_len, packing, out = sys.argv[1:7]
    seq_len, packing = int(seq_len), packing == "1"
    tok = Tokenizer.from_file(tok_dir + "/tokenizer.json")
    eos = next(tok.token_to_id(t) for t in ("<|end_of_text|>", "<|endoftext|>") if tok.token_to_id(t) is not None)
    pad = eos
    samples = []
    encoded = [e.ids for e in tok.encode_batch(documents(path, column))]
    if packing:
        stream = [i for ids in encoded for i in ids + [eos]]
        samples = [stream[k:k + seq_len] for k in range(0, len(stream), seq_len)]
    else:
        samples = [(ids + [eos])[:seq_len] for ids in encoded]
    result = {"input_ids": [], "attention_mask": [], "labels": [], "pad_id": pad}
    for s in samples:
        n = len(s)
        result["input_ids"].append(s + [pad] * (seq_len - n))
        result["attention_mask"].append([1] * n + [0] * (seq_len - n))
        result["labels"].append(s + [-100] * (seq_len - n))
    json.dump(result, open(out, "w"))


if __name__ == "__main__":
    main()
