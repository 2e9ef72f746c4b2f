"""LeRobot's side of the act interop test; runs in the LeRobot 0.6.1 peer venv.

    python lerobot_act_interop.py make DIR
        writes DIR/checkpoints/000000/pretrained_model/ with LeRobot's own save_pretrained(): a
        small ACT for the tiny dataset's features (state 6, camera 3x96x128, action 6).
    python lerobot_act_interop.py check DIR SHARDKIT_PRETRAINED_MODEL
        loads shardkit's folder with ACTPolicy.from_pretrained(strict=True) (any missing or
        unexpected key fails), checks that every tensor equals the one LeRobot saved in DIR (the
        shardkit run trained with lr 0), and that both predict the same action chunk.
"""
import sys
from pathlib import Path

import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.act.configuration_act import ACTConfig
from lerobot.policies.act.modeling_act import ACTPolicy


def make(root):
    torch.manual_seed(0)
    config = ACTConfig(
        input_features={"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
                        "observation.images.top": PolicyFeature(type=FeatureType.VISUAL, shape=(3, 96, 128))},
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))},
        pretrained_backbone_weights=None, dim_model=32, n_heads=4, dim_feedforward=64, n_encoder_layers=2,
        n_vae_encoder_layers=1, chunk_size=10, n_action_steps=10, device="cpu")
    ACTPolicy(config).save_pretrained(Path(root) / "checkpoints/000000/pretrained_model")


def check(root, shardkit_dir):
    theirs = ACTPolicy.from_pretrained(shardkit_dir, strict=True)
    ours = ACTPolicy.from_pretrained(Path(root) / "checkpoints/000000/pretrained_model", strict=True)
    a, b = theirs.state_dict(), ours.state_dict()
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    different = [k for k in a if not torch.equal(a[k], b[k])]
    assert not different, f"tensors that differ: {different[:5]}"
    g = torch.Generator().manual_seed(1)
    batch = {"observation.state": torch.randn(2, 6, generator=g),
             "observation.images.top": torch.rand(2, 3, 96, 128, generator=g)}
    torch.testing.assert_close(theirs.predict_action_chunk(dict(batch)), ours.predict_action_chunk(dict(batch)))
    print(f"ok: LeRobot loaded shardkit's checkpoint strictly, {len(a)} tensors equal to LeRobot's own")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
