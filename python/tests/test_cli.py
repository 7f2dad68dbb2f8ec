"""The `supple` command of the Python package runs the CLI's Rust code."""

from __future__ import annotations

import json
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
