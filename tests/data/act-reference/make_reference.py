"""Reference outputs of LeRobot 0.6.1's ACT for shardkit's act policy tests.

Run in a Python 3.12 venv with `pip install "lerobot[dataset]==0.6.1"` (see STACK-FACTS.md):
    python make_reference.py act-reference.safetensors

Two small ACTs (one with a camera and state, one with environment state and state) get weights from
a closed formula over their sorted state-dict keys, so that shardkit fills the same weights
without storing them: the k-th key (sorted) of n elements is
    sin(arange(n, float32) * 0.37 + k) * 0.05  (+ 1 for batch-norm running_var and weight),
except `model.vae_encoder_pos_enc`, a fixed buffer that is compared instead. The file holds,
per model `<m>/`: the inputs, the eval-mode actions, and mu / log_sigma_x2 of a training-mode
forward (dropout 0), plus the state-dict keys and shapes in its metadata; `camera_novae/` is the
camera model without the VAE, whose training loss (`<m>/loss`) is deterministic and compared.
"""
import json
import sys

import torch
from safetensors.torch import save_file

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.act.configuration_act import ACTConfig
from lerobot.policies.act.modeling_act import ACTPolicy

SMALL = dict(dim_model=32, n_heads=4, dim_feedforward=64, n_encoder_layers=2, n_decoder_layers=1,
             n_vae_encoder_layers=2, latent_dim=8, chunk_size=5, n_action_steps=5, dropout=0.0,
             pretrained_backbone_weights=None)


def formula_fill(policy):
    state = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(state)):
            t = state[name]
            if name == "model.vae_encoder_pos_enc":
                continue
            v = torch.sin(torch.arange(t.numel(), dtype=torch.float32) * 0.37 + k) * 0.05
            if name.endswith("running_var") or (".bn" in name or "downsample.1" in name) and name.endswith("weight"):
                v = v + 1.0
            t.copy_(v.reshape(t.shape))


def make(prefix, input_features, batch, out, meta, **overrides):
    config = ACTConfig(input_features=input_features,
                       output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))},
                       **{**SMALL, **overrides})
    policy = ACTPolicy(config)
    formula_fill(policy)
    state = policy.state_dict()
    meta[prefix] = {name: list(t.shape) for name, t in state.items()}
    policy.eval()
    with torch.no_grad():
        actions = policy.predict_action_chunk(dict(batch))
    policy.train()
    with torch.no_grad():
        loss, _ = policy.forward(dict(batch))
    out[f"{prefix}/loss"] = loss.reshape(1).contiguous()
    if not config.use_vae:
        for key, value in batch.items():
            out[f"{prefix}/input/{key}"] = value.clone().contiguous()
        out[f"{prefix}/actions"] = actions.contiguous()
        return
    images = [batch[k] for k in config.image_features]
    b = dict(batch)
    if images:
        b["observation.images"] = images
    with torch.no_grad():
        _, (mu, log_sigma_x2) = policy.model(b)
    for key, value in batch.items():
        out[f"{prefix}/input/{key}"] = value.clone().contiguous()
    out[f"{prefix}/actions"] = actions.contiguous()
    out[f"{prefix}/mu"] = mu.contiguous()
    out[f"{prefix}/log_sigma_x2"] = log_sigma_x2.contiguous()
    if "model.vae_encoder_pos_enc" in state:
        out[f"{prefix}/vae_encoder_pos_enc"] = state["model.vae_encoder_pos_enc"].contiguous()


def main(path):
    g = torch.Generator().manual_seed(0)
    B = 2
    action = torch.randn(B, 5, 6, generator=g)
    is_pad = torch.zeros(B, 5, dtype=torch.bool)
    is_pad[1, 3:] = True
    out, meta = {}, {}
    camera = {
        "observation.state": torch.randn(B, 6, generator=g),
        "observation.images.top": torch.rand(B, 3, 48, 64, generator=g),
        "action": action, "action_is_pad": is_pad,
    }
    make("camera", {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
                    "observation.images.top": PolicyFeature(type=FeatureType.VISUAL, shape=(3, 48, 64))},
         camera, out, meta)
    # Without the VAE the training loss is deterministic (dropout 0): it is compared too.
    make("camera_novae", {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
                          "observation.images.top": PolicyFeature(type=FeatureType.VISUAL, shape=(3, 48, 64))},
         camera, out, meta, use_vae=False)
    # LeRobot 0.6.1 reads observation.state's device even without it: the env model has a state too.
    env = {
        "observation.state": torch.randn(B, 6, generator=g),
        "observation.environment_state": torch.randn(B, 4, generator=g),
        "action": action, "action_is_pad": is_pad,
    }
    make("env", {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
                 "observation.environment_state": PolicyFeature(type=FeatureType.ENV, shape=(4,))}, env, out, meta)
    save_file(out, path, metadata={"keys": json.dumps(meta, sort_keys=True)})


if __name__ == "__main__":
    main(sys.argv[1])
