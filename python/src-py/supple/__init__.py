"""Supple: penetration-free deformable-body simulation on Vulkan compute, from Python.

>>> import numpy as np, supple
>>> sim = (supple.SceneBuilder(frame_rate=60)
...        .body("cube", vertices=V, tets=T,
...              material=supple.material("stable-neo-hookean", 2e5, 0.3, 1000.0),
...              translation=(0, 0, 0.3))
...        .ground_plane()
...        .build())
>>> stats = sim.step()        # releases the GIL; the frame's statistics as a dict
>>> x = sim.positions()       # new (N, 3) float64 array

Bad input raises ``ValueError`` naming the argument or scene field, device failures
``supple.VulkanError`` (a ``RuntimeError``), unreadable files ``OSError``.
"""

from __future__ import annotations

from typing import Any, Sequence

try:
    from ._supple import (
        SceneBuilder,
        Simulation,
        VulkanError,
        __version__,
        devices,
    )
except ImportError as e:  # pragma: no cover - only when the wheel was not built
    raise ImportError(
        "the native module supple._supple is missing: build and install the package with "
        "`pip install ./python` (or `maturin develop -m python/Cargo.toml`) from a Supple clone"
    ) from e

__all__ = [
    "SceneBuilder",
    "Simulation",
    "VulkanError",
    "__version__",
    "devices",
    "material",
    "plane",
    "sphere",
    "box",
    "vertex_set",
    "viz",
]


def material(
    model: str,
    youngs_modulus: float,
    poisson_ratio: float,
    density: float,
    *,
    thickness: float | None = None,
    bending_stiffness: float | None = None,
    radius: float | None = None,
) -> dict[str, Any]:
    """A body's material as the scene file's ``material`` table.

    ``model``: ``"stable-neo-hookean"``, ``"stvk"``, ``"corotated"`` (solids), ``"cloth"``
    (needs ``thickness``, m) or ``"rod"`` (needs ``radius``, m). Young's modulus in Pa, density
    in kg/m³.
    """
    m: dict[str, Any] = {
        "model": model,
        "youngs_modulus": youngs_modulus,
        "poisson_ratio": poisson_ratio,
        "density": density,
    }
    for key, value in (
        ("thickness", thickness),
        ("bending_stiffness", bending_stiffness),
        ("radius", radius),
    ):
        if value is not None:
            m[key] = value
    return m


def _collider(shape: dict[str, Any], friction: float, velocity: Sequence[float]) -> dict[str, Any]:
    return {"shape": shape, "friction": friction, "velocity": list(velocity)}


def plane(
    normal: Sequence[float] = (0.0, 0.0, 1.0),
    offset: float = 0.0,
    *,
    friction: float = 0.0,
    velocity: Sequence[float] = (0.0, 0.0, 0.0),
) -> dict[str, Any]:
    """An analytic half-space collider ``normal · x ≥ offset`` (m)."""
    return _collider({"plane": {"normal": list(normal), "offset": offset}}, friction, velocity)


def sphere(
    center: Sequence[float],
    radius: float,
    *,
    friction: float = 0.0,
    velocity: Sequence[float] = (0.0, 0.0, 0.0),
) -> dict[str, Any]:
    """An analytic sphere collider (m)."""
    return _collider({"sphere": {"center": list(center), "radius": radius}}, friction, velocity)


def box(
    min: Sequence[float],
    max: Sequence[float],
    *,
    friction: float = 0.0,
    velocity: Sequence[float] = (0.0, 0.0, 0.0),
) -> dict[str, Any]:
    """An analytic axis-aligned box collider between corners ``min`` and ``max`` (m)."""
    return _collider({"box": {"min": list(min), "max": list(max)}}, friction, velocity)


def vertex_set(
    *, indices: Sequence[int] | None = None, region: tuple[Sequence[float], Sequence[float]] | None = None
) -> dict[str, Any]:
    """A vertex set for ``fixed``, ``motion`` and ``force``: body vertex indices, or the
    vertices inside the axis-aligned box ``region = (min, max)`` (m, after the body transform)."""
    s: dict[str, Any] = {}
    if indices is not None:
        s["indices"] = [int(i) for i in indices]
    if region is not None:
        s["region"] = {"min": list(region[0]), "max": list(region[1])}
    return s


from . import viz  # noqa: E402  (supple.viz.write_html)
