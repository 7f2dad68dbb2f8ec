"""The package: version, devices, the stubs match the native module."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import supple


def test_version_is_the_workspace_version() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    text = (root / "Cargo.toml").read_text()
    m = re.search(r'\[workspace\.package\][^\[]*?version = "([^"]+)"', text, re.S)
    assert m and supple.__version__ == m.group(1)


def test_devices_lists_dicts(device: str) -> None:
    found = supple.devices()
    assert isinstance(found[0]["name"], str) and found[0]["name"] == device
    assert "index" in found[0] and "api_version" in found[0]


def test_vulkan_error_is_a_runtime_error() -> None:
    assert issubclass(supple.VulkanError, RuntimeError)


def test_stubs_match_the_native_module() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "supple._supple"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
