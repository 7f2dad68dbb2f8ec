#!/usr/bin/env python3
"""Overhead of driving Supple from Python: `tet_cube_drop` stepped from Python (`sim.step()` +
`sim.positions()` per frame, the work `supple bench scene` times per frame: a step and the
position readback) against `supple bench scene` of the same build, in paired rounds.

Run with the Python package installed (scripts/dev.sh test installs it into target/py-venv):

    target/py-venv/bin/python benches/bench_python_overhead.py [--frames 30] [--rounds 3]

`supple bench scene` runs through the package's own `supple` command (`python -m supple`: the
same Rust code as the binary, in a separate process). Each round runs the CLI and Python (alternating which goes first),
each from a freshly built simulation after one warm-up frame. Prints one JSON object:
both medians (ms/frame) per round, and the ratio Python / CLI of their medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

import supple

ROOT = pathlib.Path(__file__).resolve().parents[1]


def cli_median_ms(scene: pathlib.Path, frames: int) -> float:
    out = subprocess.run(
        [sys.executable, "-m", "supple", "bench", "scene", str(scene), "--frames", str(frames), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(json.loads(out)["ms_per_frame_median"])


def python_median_ms(scene: pathlib.Path, frames: int) -> float:
    sim = supple.Simulation.from_toml(scene)
    sim.step()
    sim.positions()
    out = None
    times = []
    for _ in range(frames):
        t0 = time.perf_counter()
        sim.step()
        out = sim.positions(out=out)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", type=pathlib.Path, default=ROOT / "scenes" / "tet_cube_drop.toml")
    p.add_argument("--frames", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    rounds = []
    for k in range(a.rounds):
        # Alternate the order so a load that drifts during the run weighs on both.
        if k % 2 == 0:
            cli = cli_median_ms(a.scene, a.frames)
            py = python_median_ms(a.scene, a.frames)
        else:
            py = python_median_ms(a.scene, a.frames)
            cli = cli_median_ms(a.scene, a.frames)
        rounds.append({"cli_ms_per_frame": cli, "python_ms_per_frame": py, "ratio": py / cli})
    cli_m = statistics.median(r["cli_ms_per_frame"] for r in rounds)
    py_m = statistics.median(r["python_ms_per_frame"] for r in rounds)
    print(
        json.dumps(
            {
                "scene": str(a.scene.relative_to(ROOT) if a.scene.is_relative_to(ROOT) else a.scene),
                "frames": a.frames,
                "device": supple.Simulation.from_toml(a.scene).device,
                "cli_ms_per_frame_median": cli_m,
                "python_ms_per_frame_median": py_m,
                "python_over_cli": py_m / cli_m,
                "median_of_round_ratios": statistics.median(r["ratio"] for r in rounds),
                "within_5_percent": py_m <= 1.05 * cli_m,
                "rounds": rounds,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
