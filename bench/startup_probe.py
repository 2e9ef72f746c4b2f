"""Start-up probe: seconds from spawning a command to its first output line and to the first
line matching a pattern (shardkit-train's first `step 1/` progress line = first training step done).

Usage: startup_probe.py --runs N --match REGEX --out FILE -- COMMAND [ARGS...]
Each argument equal to {run} is replaced by the run number (for a fresh --output_dir per run).
Appends one JSON line per run: {"first_line_s":..,"match_s":..,"exit_s":..}
"""
import argparse
import json
import re
import subprocess
import time


def probe(cmd, pattern):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    first = matched = None
    for line in proc.stdout:
        now = time.perf_counter() - start
        if first is None:
            first = now
        if matched is None and pattern.search(line):
            matched = now
    rc = proc.wait()
    end = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with {rc}")
    return {"first_line_s": first, "match_s": matched, "exit_s": end}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--match", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    if not cmd:
        p.error("give the command after --")
    pattern = re.compile(a.match)
    with open(a.out, "a") as f:
        for run in range(a.runs):
            result = probe([arg.replace("{run}", str(run)) for arg in cmd], pattern)
            f.write(json.dumps(result) + "\n")
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
