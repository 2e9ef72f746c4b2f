"""shardkit's Python side: a thin front end that drives the shardkit C++ binaries.

`shardkit.aitraining` is AITraining's API (LLMTrainingParams, AutoTrainProject): an AITraining
script changes only its imports.
"""
__version__ = "0.1.0"
