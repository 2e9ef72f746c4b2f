"""The chat SFT benchmark's model and data, made by the Python peers (no network).

usage: make_fixture.py OUT_DIR [NUM_CONVERSATIONS]
Writes OUT_DIR/model: a byte-level BPE tokenizer (4,000 tokens, trained by `tokenizers` on the
generated conversations) saved by transformers with Qwen2.5's chat template
(tests/data/chat-templates/qwen2_5.jinja), and a random Qwen2ForCausalLM saved by transformers
(hidden 512, 4 layers, 8 heads, 2 key/value heads, MLP 1408, tied embeddings: 11.5 M
parameters); OUT_DIR/chat.jsonl: NUM_CONVERSATIONS (default 512) `messages` lists, a system turn
in one of three, one to three user/assistant exchanges, 40 to 250 tokens each.
"""
import json
import os
import random
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[2] / "tests" / "data" / "chat-templates" / "qwen2_5.jinja"
WORDS = ("the a model learns to answer questions about robots cubes water cups tables shards gradients tokens "
         "layers training steps data files checkpoints sharded weights fast slow please explain why how what "
         "when where which today tomorrow green blue red small large first second third").split()


def sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + rng.choice([".", "?", "!"])


def conversations(n, seed=7):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        messages = []
        if i % 3 == 0:
            messages.append({"role": "system", "content": sentence(rng, rng.randint(4, 10))})
        for _ in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": " ".join(sentence(rng, rng.randint(4, 12))
                                                                for _ in range(rng.randint(1, 3)))})
            messages.append({"role": "assistant", "content": " ".join(sentence(rng, rng.randint(5, 15))
                                                                     for _ in range(rng.randint(1, 4)))})
        out.append(messages)
    return out


def main():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    os.makedirs(os.path.join(root, "model"), exist_ok=True)
    convs = conversations(n)
    with open(os.path.join(root, "chat.jsonl"), "w", encoding="utf-8") as f:
        for messages in convs:
            f.write(json.dumps({"messages": messages}) + "\n")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    texts = [m["content"] for c in convs for m in c]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=4000, show_progress=False,
                                                       special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = TEMPLATE.read_text(encoding="utf-8")
    fast.save_pretrained(os.path.join(root, "model"))
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=tok.get_vocab_size(), hidden_size=512, intermediate_size=1408,
                         num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
                         max_position_embeddings=1024, tie_word_embeddings=True,
                         eos_token_id=tok.token_to_id("<|im_end|>"), pad_token_id=tok.token_to_id("<|endoftext|>"))
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(os.path.join(root, "model"))
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters, {len(convs)} conversations")


if __name__ == "__main__":
    main()
