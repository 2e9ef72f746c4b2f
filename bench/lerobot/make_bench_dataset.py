# A larger LeRobot v3.0 dataset for the loader benchmark, written by LeRobot itself (run in a lerobot 0.6.1 venv):
# the tiny test dataset's content (state, action = state rolled by one joint, one camera with a moving square)
# with more and longer episodes. Usage: make_bench_dataset.py <root> <episodes> <frames per episode> [height width]
import shutil, sys

import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset

root, episodes, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
H, W = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (96, 128)
shutil.rmtree(root, ignore_errors=True)
features = {
    "observation.state": {"dtype": "float32", "shape": (6,), "names": [f"j{i}" for i in range(6)]},
    "action": {"dtype": "float32", "shape": (6,), "names": [f"j{i}" for i in range(6)]},
    "observation.images.top": {"dtype": "video", "shape": (H, W, 3), "names": ["height", "width", "channels"]},
}
ds = LeRobotDataset.create(repo_id="local/bench", fps=10, features=features, root=root, use_videos=True)
yy, xx = np.mgrid[0:H, 0:W]
for ep in range(episodes):
    for t in range(frames):
        img = np.zeros((H, W, 3), np.uint8)
        img[..., 0] = (xx * 2 + t * 3) % 256
        img[..., 1] = (yy * 2 + ep * 40) % 256
        img[..., 2] = 80
        x0 = (t * 4) % (W - 16)
        img[H // 2 - 8:H // 2 + 8, x0:x0 + 16] = 255
        s = np.sin(np.arange(6) * 0.3 + t * 0.1 + ep).astype(np.float32)
        ds.add_frame({"observation.state": s, "action": np.roll(s, 1), "observation.images.top": img,
                      "task": f"push block {ep % 5}"})
    ds.save_episode()
ds.finalize()
print("ok", ds.num_episodes, ds.num_frames)
