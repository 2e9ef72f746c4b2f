# Reads a trackio project (in $TRACKIO_DIR) with trackio's own Python API and prints what it holds,
# one fact per line: "run <name> <id>", "config <run> <key> <JSON value>" for each top-level key
# of the run's config, and "log <run> <step> <name> <repr of the float>" for each logged value.
import json
import sys

import trackio
from trackio.sqlite_storage import SQLiteStorage

project = sys.argv[1]
for run in trackio.Api().runs(project):
    print("run", run.name, run.id)
    for key, value in sorted((run.config or {}).items()):
        print("config", run.name, key, json.dumps(value, separators=(",", ":")))
    for row in SQLiteStorage.get_logs(project, run.name):
        for name, value in row.items():
            if name not in ("timestamp", "step"):
                print("log", run.name, row["step"], name, repr(float(value)))
