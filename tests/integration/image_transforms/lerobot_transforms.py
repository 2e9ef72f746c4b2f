"""Replays shardkit's image transform cases with LeRobot 0.6.1's own transform objects and compares.

Usage: python lerobot_transforms.py <cases.safetensors>   (in a venv with lerobot 0.6.1 and torchvision)
The file holds the input images ("frame" [3, H, W], "frames" [2, 3, H, W]) and one output per case;
its metadata maps each case to "<input>|<kind> <factor> <tx> <ty>;...". Each transform is LeRobot's
configured one (ImageTransformsConfig().tfs[kind]) called with those parameters, so the reference
is torchvision's kernels exactly as LeRobot drives them. Prints one line per case and exits 1 if any
float32 value differs by more than TOLERANCE.
"""
import sys

import torch
from safetensors import safe_open
from lerobot.transforms.transforms import ImageTransformsConfig, make_transform_from_config

TOLERANCE = 1e-6


def params(kind, factor, tx, ty):
    if kind in ("brightness", "contrast", "saturation", "hue"):
        p = {"fn_idx": torch.arange(4)}
        for name in ("brightness", "contrast", "saturation", "hue"):
            p[name + "_factor"] = factor if name == kind else None
        return p
    if kind == "sharpness":
        return {"sharpness_factor": factor}
    return {"angle": factor, "translate": (tx, ty), "scale": 1.0, "shear": (0.0, 0.0)}


def main(path):
    tfs = {name: make_transform_from_config(cfg) for name, cfg in ImageTransformsConfig().tfs.items()}
    worst = 0.0
    failed = 0
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        for case in sorted(meta, key=lambda c: int(c[4:])):
            source, steps = meta[case].split("|")
            image = f.get_tensor(source)
            for step in filter(None, steps.split(";")):
                kind, factor, tx, ty = step.split()
                image = tfs[kind].transform(image, params(kind, float(factor), int(tx), int(ty)))
            ours = f.get_tensor(case)
            diff = (ours - image).abs().max().item()
            differing = int(((ours - image).abs() > TOLERANCE).sum().item())
            worst = max(worst, diff)
            print(f"{case} {meta[case]}: max |diff| {diff:.3g}, {differing} values over {TOLERANCE}")
            if ours.shape != image.shape or differing:
                failed += 1
    if failed:
        print(f"FAILED: {failed} cases differ from LeRobot's transforms by more than {TOLERANCE}")
        return 1
    print(f"ok: {len(meta)} cases within {TOLERANCE} of LeRobot's transforms (largest difference {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
