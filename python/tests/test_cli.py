"""The `supple` command of the Python package runs the CLI's Rust code."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest


@pytest.mark.gpu
def test_python_m_supple_run_writes_report(tmp_path, device: str) -> None:
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "supple", "run", "--frames", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["frames"], report.keys()


def test_bad_arguments_exit_2() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "supple", "run", "--no-such-flag"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "--no-such-flag" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "supple", "run", "/nonexistent/scene.toml"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)


def test_the_supple_command_is_installed() -> None:
    exe = pathlib.Path(sys.executable).parent / "supple"
    r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("supple "), (r.returncode, r.stderr)


TINY = """
[simulation]
frame_rate = 60.0

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
translation = [0.0, 0.0, 0.1]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"""


@pytest.mark.gpu
def test_sweep_entries_run_through_this_interpreter(tmp_path, device: str) -> None:
    # `supple sweep` from the package starts each entry as `python -m supple run …`.
    (tmp_path / "tiny.toml").write_text(TINY)
    spec = tmp_path / "spec.toml"
    spec.write_text('scene = "tiny.toml"\nframes = 1\n[grid]\n"simulation.substeps" = [1, 2]\n')
    out = tmp_path / "sweep"
    r = subprocess.run(
        [sys.executable, "-m", "supple", "sweep", str(spec), "--jobs", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for i in range(2):
        report = json.loads((out / "runs" / f"{i:04}" / "report.json").read_text())
        assert report["substeps"] == i + 1
