"""Shared fixtures: small meshes as NumPy arrays and the device check.

Lavapipe (Mesa's CPU Vulkan driver) counts as a device, so the GPU tests run in CI; without
any device they fail (never skipped silently): `supple.devices()` says what to install."""

from __future__ import annotations

import numpy as np
import pytest

import supple


def box_mesh(cells: int = 2, size: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """A cube of `cells`³ cells split into 6 tets each (positive volumes), centred at 0."""
    n = cells + 1
    g = np.linspace(-size / 2, size / 2, n)
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)

    def vid(i: int, j: int, k: int) -> int:
        return (k * n + j) * n + i

    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    tets = []
    for k in range(cells):
        for j in range(cells):
            for i in range(cells):
                for p in perms:
                    c = [i, j, k]
                    path = [vid(*c)]
                    for axis in p:
                        c[axis] += 1
                        path.append(vid(*c))
                    tets.append(path)
    t = np.array(tets, dtype=np.int64)
    a, b, c, d = (vertices[t[:, q]] for q in range(4))
    vol = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)
    flip = vol < 0
    t[flip, 2], t[flip, 3] = t[flip, 3].copy(), t[flip, 2].copy()
    return vertices, t


SOLID = supple.material("stable-neo-hookean", 2e5, 0.3, 1000.0)


@pytest.fixture(scope="session")
def device() -> str:
    found = supple.devices()
    assert found, "no Vulkan device: install mesa-vulkan-drivers (lavapipe) to run the tests"
    return str(found[0]["name"])
