# Reads a folder of TensorBoard event files with tensorboard's own EventAccumulator and prints
# every scalar as "scalar <tag> <step> <value>" (value as repr of the float it holds), one per
# line; tensorboard's own messages (e.g. about purged steps) go to stderr.
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

accumulator = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})  # 0: keep every value
accumulator.Reload()
for tag in sorted(accumulator.Tags()["scalars"]):
    for event in accumulator.Scalars(tag):
        print("scalar", tag, event.step, repr(event.value))
