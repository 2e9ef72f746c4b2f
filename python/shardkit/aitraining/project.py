"""AutoTrainProject: AITraining's project runner, running shardkit-llm."""
import json
import os
import shutil
import subprocess
import tempfile

from .params import LLMTrainingParams


def find_binary(name):
    """`name` in $SHARDKIT_HOME/bin, else on PATH; FileNotFoundError saying where it looked."""
    home = os.environ.get("SHARDKIT_HOME")
    if home:
        path = os.path.join(home, "bin", name)
        if os.access(path, os.X_OK):
            return path
        raise FileNotFoundError(f"SHARDKIT_HOME={home}: no executable {path}")
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(f"{name} is not on PATH: install shardkit, or set SHARDKIT_HOME to its "
                                "install (or build) folder, the one holding bin/{name}")
    return path


class AutoTrainProject:
    """AITraining's AutoTrainProject for LLMTrainingParams and the local backends.

    create() runs ``shardkit-llm --training_config <the params as training_params.json>`` and
    blocks until it ends: its output goes to this process's, and to <project>/autotrain.log.
    Returns the finished process's pid; raises RuntimeError("Training failed with exit code: N").
    `process` (AITraining's data preparation) is accepted: shardkit-llm reads the data folder
    as it is.
    """

    def __init__(self, params, backend, process=False):
        if not isinstance(params, LLMTrainingParams):
            raise ValueError(f"shardkit trains LLMTrainingParams, not {type(params).__name__}")
        if not backend.startswith("local"):
            raise ValueError(f"Invalid backend: {backend} (shardkit trains here: local)")
        self.params = params
        self.backend = backend
        self.process = process

    def create(self):
        binary = find_binary("shardkit-llm")
        with tempfile.TemporaryDirectory(prefix="shardkit-params-") as folder:
            data = self.params.model_dump()
            given = {k: v for k, v in data.items() if v is not None or k in self.params._given}
            config = os.path.join(folder, "training_params.json")
            with open(config, "w", encoding="utf-8") as f:
                json.dump(given, f)
            process = subprocess.Popen([binary, "--training_config", config])
            exit_code = process.wait()
        if exit_code != 0:
            raise RuntimeError(f"Training failed with exit code: {exit_code}")
        return process.pid
