"""shardkit.aitraining against AITraining's API and through the real binaries.

Run by CTest (python/aitraining) with SHARDKIT_HOME at the build folder and SHARDKIT_SOURCE_DIR at
the source tree: `pytest python/tests`.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from shardkit.aitraining import AutoTrainProject, LLMTrainingParams
from shardkit.aitraining.params import FIELDS
from shardkit.aitraining.project import find_binary

SOURCE = os.environ.get("SHARDKIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def aitraining_text(value):
    """A default as shardkit-llm --help prints it."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "3e-05" if value == 3e-5 else repr(value)
    return str(value)


def test_fields_and_defaults_are_shardkit_llms():
    out = subprocess.run([find_binary("shardkit-llm"), "--help"], capture_output=True, text=True, check=True).stdout
    listed = dict(re.findall(r"^  --(\w+) \((.*)\)$", out, re.M))
    ours = {name: aitraining_text(default) for name, _, default in FIELDS}
    # The command line's block size is 1024, the Python model's -1 (as AITraining's).
    assert listed.pop("block_size") == "1024" and ours.pop("block_size") == "-1"
    assert listed == ours


def test_validation_as_aitraining(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOTRAIN_PROJECTS_DIR", str(tmp_path))
    p = LLMTrainingParams(model="m", project_name="my-model", lr="1e-4", epochs=2.0, peft="true")
    assert p.project_name == str(tmp_path / "my-model")  # a relative name goes under AUTOTRAIN_PROJECTS_DIR
    assert (p.lr, p.epochs, p.peft, p.lora_alpha, p.gradient_accumulation) == (1e-4, 2, True, 32, 4)
    assert LLMTrainingParams(trainer="sft").chat_template == "tokenizer"  # AITraining's default for sft
    assert LLMTrainingParams(trainer="default").chat_template is None
    assert LLMTrainingParams(chat_template="none").chat_template is None
    for bad in ({"lr": "fast"}, {"epochs": 1.5}, {"peft": "maybe"}, {"learning_rate": 1e-4},
                {"project_name": "my model!"}, {"project_name": "x" * 51}, {"epochs": None}):
        with pytest.raises(ValueError):
            LLMTrainingParams(**bad)
    with pytest.raises(ValueError):
        AutoTrainProject(params=p, backend="spaces-a10g-large")
    assert "*****" in repr(LLMTrainingParams(token="hf_secret")) and "hf_secret" not in repr(
        LLMTrainingParams(token="hf_secret"))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """lm_fixture.py's tiny Llama with a chat template, and a data folder of conversations."""
    root = tmp_path_factory.mktemp("inputs")
    subprocess.run([sys.executable, os.path.join(SOURCE, "tests/integration/llm/lm_fixture.py"), "make", str(root)],
                   check=True, capture_output=True)
    (root / "data").mkdir()
    words = "the quick brown fox jumps over a lazy dog".split()
    with open(root / "data" / "train.jsonl", "w") as f:
        for i in range(32):
            say = " ".join(words[(i + k) % len(words)] for k in range(5))
            answer = " ".join(words[(i * 3 + k) % len(words)] for k in range(6))
            f.write(json.dumps({"messages": [{"role": "user", "content": say},
                                             {"role": "assistant", "content": answer}]}) + "\n")
    return root


def test_the_python_example_trains_through_shardkit_llm(inputs, tmp_path):
    params = LLMTrainingParams(model=str(inputs / "model"), data_path=str(inputs / "data"),
                               project_name=str(tmp_path / "py-project"), trainer="sft", peft=True, block_size=64,
                               lr=1e-3, epochs=1, batch_size=4, log="tensorboard")
    project = AutoTrainProject(params=params, backend="local", process=True)
    assert isinstance(project.create(), int)
    folder = tmp_path / "py-project"
    assert (folder / "checkpoints" / "last" / "pretrained_model" / "adapter_model.safetensors").exists()
    assert "checkpoint saved" in (folder / "autotrain.log").read_text()
    recorded = json.loads((folder / "training_params.json").read_text())
    assert (recorded["lr"], recorded["peft"], recorded["block_size"], recorded["trainer"]) == (1e-3, True, 64, "sft")


def test_a_failed_training_raises_as_aitraining(inputs, tmp_path):
    params = LLMTrainingParams(model=str(tmp_path / "no-model"), data_path=str(inputs / "data"),
                               project_name=str(tmp_path / "failing"))
    with pytest.raises(RuntimeError, match="Training failed with exit code: 2"):
        AutoTrainProject(params=params, backend="local", process=True).create()


def test_pip_installs_the_package(tmp_path):
    # From a copy: building writes build/ and *.egg-info beside pyproject.toml.
    shutil.copytree(os.path.join(SOURCE, "python"), tmp_path / "source",
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(tmp_path / "site"), str(tmp_path / "source")], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", "import shardkit.aitraining as a; print(a.__file__)"],
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith(str(tmp_path / "site"))
