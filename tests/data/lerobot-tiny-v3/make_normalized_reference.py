"""make_normalized_reference.py ROOT OUT.safetensors: what lerobot 0.6.1's NormalizerProcessorStep makes of a few
items of a local v3 dataset (the delta_timestamps of make_reference.py), with ACT's normalization_mapping
(VISUAL, STATE, ACTION: MEAN_STD) and the dataset's stats as lerobot-train uses them (ImageNet mean/std for
cameras), as reference tensors for shardkit's Normalizer. Keys `<index>/<feature>` (with a batch dimension of 1)."""
import sys, json, torch
from safetensors.torch import save_file
from lerobot.configs.types import FeatureType, NormalizationMode
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.processor import PolicyProcessorPipeline
from lerobot.processor.normalize_processor import NormalizerProcessorStep
from lerobot.utils.constants import IMAGENET_STATS
from lerobot.utils.feature_utils import dataset_to_policy_features

root, out = sys.argv[1], sys.argv[2]
fps = json.load(open(f"{root}/meta/info.json"))["fps"]
delta = {"observation.state": [-1 / fps, 0.0], "action": [i / fps for i in range(10)], "observation.images.top": [0.0]}
ds = LeRobotDataset("local/tiny", root=root, delta_timestamps=delta, video_backend="pyav")
for key in ds.meta.camera_keys:  # lerobot-train's dataset.use_imagenet_stats (default true)
    for stat, value in IMAGENET_STATS.items():
        ds.meta.stats[key][stat] = torch.tensor(value, dtype=torch.float32)
norm_map = {FeatureType.VISUAL: NormalizationMode.MEAN_STD, FeatureType.STATE: NormalizationMode.MEAN_STD,
            FeatureType.ACTION: NormalizationMode.MEAN_STD}
step = NormalizerProcessorStep(features=dataset_to_policy_features(ds.meta.features), norm_map=norm_map,
                               stats=ds.meta.stats)
pipeline = PolicyProcessorPipeline(steps=[step])
t = {}
idx = [0, 29, 64, 104]
names = ["observation.state", "action", "observation.images.top"]
for i in idx:
    item = ds[i]
    normalized = pipeline({k: item[k].unsqueeze(0) for k in names})
    for k in names:
        t[f"{i}/{k}"] = normalized[k].contiguous()
save_file(t, out, metadata={"indices": json.dumps(idx), "delta_timestamps": json.dumps(delta), "lerobot": "0.6.1",
                            "normalization_mapping": json.dumps({k.value: v.value for k, v in norm_map.items()})})
print(len(t), "tensors")
