# Reads a checkpoint's LeRobot processor files the way LeRobot 0.6.1's DataProcessorPipeline.from_pretrained does
# (steps by registry_name, each state_file loaded with safetensors, keys split at their last dot) and checks them
# against the dataset's meta/stats.json. Usage: check_processor_files.py <pretrained_model> <dataset root> <imagenet 0|1>
import json, sys
import numpy as np
from safetensors.numpy import load_file

folder, dataset, imagenet = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
info = json.load(open(f"{dataset}/meta/info.json"))
stats = json.load(open(f"{dataset}/meta/stats.json"))
cameras = [k for k, f in info["features"].items() if f["dtype"] in ("image", "video")]
if imagenet:  # lerobot-train's dataset.use_imagenet_stats
    for k in cameras:
        stats[k]["mean"] = [[[0.485]], [[0.456]], [[0.406]]]
        stats[k]["std"] = [[[0.229]], [[0.224]], [[0.225]]]
expected = {f"{k}.{s}": np.atleast_1d(np.array(v)).astype(np.float32) for k, d in stats.items() for s, v in d.items()}
problems = []

def check_pipeline(name, registry_names, stateful, features):
    config = json.load(open(f"{folder}/{name}.json"))
    if config["name"] != name:
        problems.append(f"{name}.json: name {config['name']}")
    names = [s.get("registry_name") for s in config["steps"]]
    if names != registry_names:
        problems.append(f"{name}.json: steps {names}, expected {registry_names}")
        return
    step = config["steps"][stateful]
    want_file = f"{name}_step_{stateful}_{registry_names[stateful]}.safetensors"
    if step.get("state_file") != want_file:
        problems.append(f"{name}.json: state_file {step.get('state_file')}, expected {want_file}")
        return
    c = step["config"]
    if c["eps"] != 1e-8:
        problems.append(f"{name}: eps {c['eps']}")
    if c["norm_map"] != {"STATE": "MEAN_STD", "ACTION": "MEAN_STD"}:
        problems.append(f"{name}: norm_map {c['norm_map']}")
    if c["features"] != features:
        problems.append(f"{name}: features {c['features']}, expected {features}")
    state = load_file(f"{folder}/{want_file}")
    if set(state) != set(expected):
        problems.append(f"{want_file}: keys {sorted(set(state) ^ set(expected))} differ from stats.json")
    for key, value in state.items():
        if key in expected and (value.dtype != np.float32 or value.shape != expected[key].shape
                                or not np.array_equal(value, expected[key])):
            problems.append(f"{want_file}: {key} = {value.tolist()} ({value.dtype}), expected {expected[key].tolist()}")
        feature, stat = key.rsplit(".", 1)  # LeRobot's load_state_dict
        if feature not in stats or stat not in stats[feature]:
            problems.append(f"{want_file}: key {key} does not split into a feature and a statistic")

def shape(f):
    s = info["features"][f]["shape"]
    return [s[2], s[0], s[1]] if info["features"][f]["dtype"] in ("image", "video") else s

inputs = {k: {"type": "VISUAL" if k in cameras else "STATE", "shape": shape(k)}
          for k in info["features"] if k.startswith("observation")}
outputs = {"action": {"type": "ACTION", "shape": shape("action")}}
check_pipeline("policy_preprocessor",
               ["rename_observations_processor", "to_batch_processor", "device_processor", "normalizer_processor"],
               3, {**inputs, **outputs})
check_pipeline("policy_postprocessor", ["unnormalizer_processor", "device_processor"], 0, outputs)
print("\n".join(problems) if problems else "processor files ok")
sys.exit(1 if problems else 0)
