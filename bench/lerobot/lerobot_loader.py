# The peer of loader_bench.cpp: LeRobot's own DataLoader(LeRobotDataset(...)) on the same dataset, batch 8, ACT's
# delta timestamps (the next `chunk` actions), the same number of workers (LeRobot's are processes).
# Usage: lerobot_loader.py <dataset root> <num_workers> [batches=100] [chunk=100] [augment=0]   (lerobot 0.6.1 venv)
# augment=1: LeRobot's default image transforms on (ImageTransformsConfig(enable=True)), as lerobot-train builds them.
import json, sys, time

import torch
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.transforms.transforms import ImageTransforms, ImageTransformsConfig

root, workers = sys.argv[1], int(sys.argv[2])
batches = int(sys.argv[3]) if len(sys.argv) > 3 else 100
chunk = int(sys.argv[4]) if len(sys.argv) > 4 else 100
augment = len(sys.argv) > 5 and sys.argv[5] == "1"
torch.set_num_threads(1)
meta = json.load(open(f"{root}/meta/info.json"))
fps = meta["fps"]
transforms = ImageTransforms(ImageTransformsConfig(enable=True)) if augment else None
dataset = LeRobotDataset("local/bench", root=root, delta_timestamps={"action": [i / fps for i in range(chunk)]},
                         image_transforms=transforms)
# As lerobot-train builds it (shuffle, drop_last, prefetch_factor 2 with workers).
loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True, num_workers=workers, drop_last=True,
                                     prefetch_factor=2 if workers > 0 else None,
                                     persistent_workers=workers > 0)


def batches_forever():
    while True:
        yield from loader


it = batches_forever()
next(it)  # warm: workers started, files open
t0 = time.perf_counter()
for _ in range(batches):
    next(it)
s = time.perf_counter() - t0
print(json.dumps({"num_workers": workers, "batch_size": 8, "batches": batches,
                  "samples_per_s": round(batches * 8 / s, 1), "frames_per_s": round(batches * 8 / s, 1),
                  "augment": augment}))
