"""AITraining's Python API, trained by shardkit.

An AITraining script::

    from autotrain.params import LLMTrainingParams
    from autotrain.project import AutoTrainProject

becomes::

    from shardkit.aitraining import LLMTrainingParams
    from shardkit.aitraining import AutoTrainProject

and the rest stays: ``AutoTrainProject(params=params, backend="local", process=True).create()``
runs ``shardkit-llm --training_config ...`` (found through SHARDKIT_HOME, else on PATH), blocks
until it ends, and raises ``RuntimeError("Training failed with exit code: N")`` on failure.
"""
from .params import LLMTrainingParams
from .project import AutoTrainProject

__all__ = ["LLMTrainingParams", "AutoTrainProject"]
