"""The package: version, devices, the stubs match the native module."""

from __future__ import annotations

import os
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


def test_no_vulkan_driver_says_what_to_install() -> None:
    # A loader that finds no driver (ICD): the error names the packages to install.
    code = (
        "import supple\n"
        "try:\n"
        "    supple.devices()\n"
        "except supple.VulkanError as e:\n"
        "    print('VulkanError:', e)\n"
    )
    env = {**os.environ, "VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "VulkanError:" in r.stdout and "mesa-vulkan-drivers" in r.stdout, r.stdout
