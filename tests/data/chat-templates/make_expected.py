#!/usr/bin/env python3
"""Render the templates under more/ the way transformers renders them and write more/<name>.expected.json.

For every more/<name>.jinja listed in TEMPLATES below this renders the three conversations of
llama3.expected.json with transformers' own renderer (`render_jinja_template`, the function that
`tokenizer.apply_chat_template(tokenize=False)` calls), passing the model's special tokens the way
apply_chat_template passes `tokenizer.special_tokens_map` (only the tokens that are set), tools=None,
documents=None and each conversation's add_generation_prompt. `strftime_now` is pinned to
FIXED_NOW so that templates that print today's date render reproducibly. Where a template raises,
`rendered[i]` is null and `errors[i]` is "<ExceptionType>: <message>".

    python make_expected.py           # (re)write more/*.expected.json
    python make_expected.py --check   # re-render and compare with the files on disk (exit 1 on a difference)

Needs transformers (4.57 or later) and jinja2 >= 3.1.6; nothing else (no tokenizer files, no network).
"""

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path

import jinja2
import transformers
from transformers.utils import chat_template_utils

HERE = Path(__file__).resolve().parent
MORE = HERE / "more"
CONVERSATIONS_FROM = HERE / "llama3.expected.json"
FIXED_NOW = _dt.datetime(2025, 1, 15, 12, 0, 0)

# name -> the special tokens the model's tokenizer_config.json sets (None: not set, so not passed).
# See README.md for where each template comes from and how sure each token is.
TEMPLATES = {
    # Qwen/Qwen3-8B (and the other Qwen3 instruct checkpoints)
    "qwen3": {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    # meta-llama/Llama-3.1-8B-Instruct
    "llama3_1": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "pad_token": None},
    # meta-llama/Llama-3.2-3B-Instruct
    "llama3_2": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "pad_token": None},
    # google/gemma-2-2b-it
    "gemma2": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"},
    # google/gemma-3-4b-it (the other gemma-3 *-it checkpoints ship the same)
    "gemma3": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"},
    # microsoft/Phi-3.5-mini-instruct
    "phi3_5": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
    # Cohere Command-R style template (CohereForAI/c4ai-command-r-v01, aya-23)
    "cohere_command_r": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>", "pad_token": "<PAD>"},
    # CohereForAI/c4ai-command-r7b-12-2024, its "tool_use" template
    "command_r7b_tool_use": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>", "pad_token": "<PAD>"},
    # mistralai/Mistral-Nemo-Instruct-2407
    "mistral_nemo": {"bos_token": "<s>", "eos_token": "</s>", "pad_token": None},
    # mistralai/Mistral-Small-3.2-24B-Instruct-2506
    "mistral_small_3_2": {"bos_token": "<s>", "eos_token": "</s>", "pad_token": None},
    # deepseek-ai/DeepSeek-R1-Distill-Qwen-32B
    "deepseek_r1_distill_qwen": {
        "bos_token": "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
        "eos_token": "<\uff5cend\u2581of\u2581sentence\uff5c>",
        "pad_token": "<\uff5cend\u2581of\u2581sentence\uff5c>",
    },
    # ibm-granite/granite-3.3-2b-instruct
    "granite3_3": {"bos_token": "<|end_of_text|>", "eos_token": "<|end_of_text|>", "pad_token": "<|end_of_text|>"},
}

RENDER_SETTINGS = {
    "engine": "transformers.apply_chat_template(tokenize=False) -> ImmutableSandboxedEnvironment(trim_blocks=True, "
    "lstrip_blocks=True, extensions=[generation, loopcontrols])",
    "variables_passed": "messages, tools=None, documents=None, add_generation_prompt, + tokenizer.special_tokens_map "
    "(bos_token, eos_token, pad_token, ...)",
    "strftime_now_fixed_to": FIXED_NOW.isoformat(),
}


class _FixedDatetime(_dt.datetime):
    """What the template's strftime_now() sees: transformers calls `datetime.now().strftime(format)`."""

    @classmethod
    def now(cls, tz=None):
        return FIXED_NOW


def render_one(template, messages, add_generation_prompt, special_tokens):
    kwargs = {key: value for key, value in special_tokens.items() if value is not None}
    try:
        out = chat_template_utils.render_jinja_template(
            conversations=[messages],
            tools=None,
            documents=None,
            chat_template=template,
            add_generation_prompt=add_generation_prompt,
            **kwargs,
        )
    except Exception as exc:  # the template raised (raise_exception, undefined, type error, ...)
        return None, f"{type(exc).__name__}: {exc}"
    rendered, _generation_indices = out
    return rendered[0], None


def build(name, conversations):
    template = (MORE / f"{name}.jinja").read_text(encoding="utf-8")
    special_tokens = TEMPLATES[name]
    rendered, errors = [], []
    for conversation in conversations:
        text, error = render_one(template, conversation["messages"], conversation["add_generation_prompt"], special_tokens)
        rendered.append(text)
        errors.append(error)
    return {
        "template_file": f"more/{name}.jinja",
        "conversations": conversations,
        "rendered": rendered,
        "errors": errors,
        "special_tokens": special_tokens,
        "render_settings": RENDER_SETTINGS,
        "versions": {"transformers": transformers.__version__, "jinja2": jinja2.__version__},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the expected files instead of writing them")
    parser.add_argument("names", nargs="*", help="only these templates (default: all in TEMPLATES)")
    args = parser.parse_args()

    conversations = json.loads(CONVERSATIONS_FROM.read_text(encoding="utf-8"))["conversations"]
    unknown = sorted(set(p.stem for p in MORE.glob("*.jinja")) - set(TEMPLATES))
    if unknown:
        print(f"no special tokens listed for: {', '.join(unknown)}", file=sys.stderr)
        return 2

    chat_template_utils.datetime = _FixedDatetime  # strftime_now reads the module's `datetime` at call time
    failed = False
    for name in args.names or TEMPLATES:
        result = build(name, conversations)
        path = MORE / f"{name}.expected.json"
        status = ", ".join("ok" if e is None else "raises" for e in result["errors"])
        if args.check:
            on_disk = json.loads(path.read_text(encoding="utf-8"))
            same = all(on_disk[k] == result[k] for k in ("template_file", "conversations", "rendered", "errors", "special_tokens"))
            failed |= not same
            print(f"{name}: {'same' if same else 'DIFFERENT'} ({status})")
        else:
            path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{name}: wrote {path.name} ({status})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
