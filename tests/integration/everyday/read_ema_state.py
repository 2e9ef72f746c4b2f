# Reads a checkpoint's training_state/ema_state.pt as LeRobot main does: torch.load(weights_only=True),
# then diffusers' EMAModel.load_state_dict. Prints "<key> <type> <repr>" for each scalar in the file's
# order, "shadow <index> <shape> <dtype>" for each tensor of shadow_params, "next_decay <repr>" (the
# decay diffusers would use for the next update) and "diffusers ok" last.
import sys

import torch

try:
    from diffusers.training_utils import EMAModel
except ImportError as error:
    sys.exit(f"diffusers is not installed in {sys.executable} ({error}); scripts/setup.sh installs it")

state = torch.load(sys.argv[1], weights_only=True)
keys = ["decay", "min_decay", "optimization_step", "update_after_step", "use_ema_warmup", "inv_gamma", "power",
        "shadow_params"]
if not isinstance(state, dict) or list(state) != keys:
    sys.exit(f"not EMAModel.state_dict()'s keys: {list(state) if isinstance(state, dict) else type(state)}")
for key in keys[:-1]:
    print(key, type(state[key]).__name__, repr(state[key]))
shadow = state["shadow_params"]
for index, tensor in enumerate(shadow):
    print("shadow", index, "x".join(str(size) for size in tensor.shape), str(tensor.dtype).removeprefix("torch."))

# EMAModel over parameters of the same shapes, as LeRobot builds it from policy.parameters().
parameters = [torch.nn.Parameter(torch.zeros_like(tensor)) for tensor in shadow]
ema = EMAModel(parameters, use_ema_warmup=True)
ema.load_state_dict(state)
ema.copy_to(parameters)
if not all(torch.equal(p, t) for p, t in zip(parameters, shadow)):
    sys.exit("EMAModel.copy_to did not give back the shadow")
print("next_decay", repr(ema.get_decay(ema.optimization_step + 1)))
print("diffusers ok")
