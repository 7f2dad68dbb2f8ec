#!/usr/bin/env python3
"""Run a `supple sweep` manifest on a Ray cluster: one `supple run` process per entry.

    supple sweep sweep.toml --dry-run            # writes sweeps/sweep/manifest.jsonl
    python3 examples/sweep_ray.py sweeps/sweep/manifest.jsonl --address auto

Each manifest line holds the entry's `supple run` arguments (`args`) and run folder (`out`).
Every entry becomes a Ray task that asks for `--num-gpus` GPUs (a Ray resource: Ray schedules
the tasks so a GPU is not oversubscribed and sets CUDA_VISIBLE_DEVICES; pick the Vulkan device
per worker with SUPPLE_DEVICE if needed) and runs `supple run` as a subprocess, its output in
OUT/run.log. Entries already finished are skipped by the same rule as `supple sweep`: their
report.json parses without an `error` and their sweep_entry.json has the entry's scene hash.
Merge the results with `supple sweep collect SWEEP_DIR` afterwards.

Without --address a local cluster is started, bound to 127.0.0.1, without the dashboard.
Ray is optional for Supple (`pip install ray`); nothing else imports it.
Exit status: 0 when every entry finished, 1 when some failed, 2 on bad input.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def finished(entry):
    """Whether the entry's run folder holds a complete report for this entry's scene hash."""
    try:
        with open(os.path.join(entry["out"], "report.json"), encoding="utf-8") as f:
            report = json.load(f)
        with open(os.path.join(entry["out"], "sweep_entry.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return (
        isinstance(report, dict)
        and report.get("error") is None
        and meta.get("scene_hash") == entry["scene_hash"]
    )


def run_entry(entry, supple):
    """Runs one entry as `supple run` (the body of the Ray task); returns (index, code, s)."""
    out = entry["out"]
    os.makedirs(out, exist_ok=True)
    try:
        os.remove(os.path.join(out, "report.json"))  # a stale report must not count as done
    except FileNotFoundError:
        pass
    tmp = os.path.join(out, "sweep_entry.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(entry, f, indent=2)
    os.replace(tmp, os.path.join(out, "sweep_entry.json"))
    start = time.monotonic()
    with open(os.path.join(out, "run.log"), "wb") as log:
        code = subprocess.run(
            [supple] + entry["args"], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        ).returncode
    return entry["index"], code, time.monotonic() - start


def read_manifest(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                e = json.loads(line)
                if not all(k in e for k in ("index", "out", "args", "scene_hash")):
                    raise ValueError("needs index, out, args and scene_hash")
            except ValueError as err:
                raise SystemExit(f"error: {path}:{n}: {err}") from None
            entries.append(e)
    return entries


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("manifest", help="manifest.jsonl written by `supple sweep`")
    p.add_argument("--supple", default="supple", help="the supple executable (default: on PATH)")
    p.add_argument("--address", help="Ray cluster address (default: start a local cluster)")
    p.add_argument("--num-gpus", type=float, default=1.0, help="GPUs per run (default 1)")
    p.add_argument("--local-cpus", type=int, help="CPUs of the local cluster (default: all)")
    p.add_argument("--local-gpus", type=float, help="GPUs the local cluster declares (default: detected)")
    args = p.parse_args()
    if args.num_gpus < 0:
        print("error: --num-gpus must be >= 0", file=sys.stderr)
        return 2
    try:
        entries = read_manifest(args.manifest)
    except OSError as err:
        print(f"error: {args.manifest}: {err}", file=sys.stderr)
        return 2
    todo = [e for e in entries if not finished(e)]
    print(f"[ray] {len(entries)} entries, {len(entries) - len(todo)} done, {len(todo)} to run", flush=True)
    if not todo:
        return 0
    try:
        import ray
    except ImportError:
        print("error: this example needs Ray: pip install ray", file=sys.stderr)
        return 2
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            num_cpus=args.local_cpus,
            num_gpus=args.local_gpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            object_store_memory=100 * 1024 * 1024,
            log_to_driver=False,
        )
    task = ray.remote(run_entry)
    refs = [task.options(num_gpus=args.num_gpus, num_cpus=1).remote(e, args.supple) for e in todo]
    failed = 0
    by_index = {e["index"]: e for e in todo}
    for index, code, seconds in ray.get(refs):
        ok = code == 0 and finished(by_index[index])
        failed += not ok
        state = "done" if ok else f"failed (exit {code}, see {by_index[index]['out']}/run.log)"
        print(f"[ray] entry {index} {state} in {seconds:.1f} s", flush=True)
    ray.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
