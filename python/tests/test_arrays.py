"""Arrays in: shapes, dtypes, memory orders and indices are checked when the body is added,
before any GPU work (SceneBuilder.body never touches the device)."""

from __future__ import annotations

import numpy as np
import pytest

import supple
from conftest import SOLID, box_mesh


def add(**kwargs: object) -> supple.SceneBuilder:
    return supple.SceneBuilder().body("cube", material=SOLID, **kwargs)


def test_any_real_dtype_and_memory_order_is_accepted() -> None:
    v, t = box_mesh()
    reference = add(vertices=v, tets=t).to_toml()
    for vv, tt in [
        (v, t.astype(np.int32)),
        (np.asfortranarray(v), np.asfortranarray(t.astype(np.uint16))),
        (np.ascontiguousarray(v[::-1])[::-1], t.astype(np.uint64)),
        (v.tolist(), t.tolist()),
    ]:
        assert add(vertices=vv, tets=tt).to_toml() == reference
    # float32 and integer coordinates are converted to float64.
    add(vertices=v.astype(np.float32), tets=t)
    add(vertices=(v * 10).astype(np.int64), tets=t)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"vertices": np.zeros((8, 2))}, ["vertices", "(N, 3)", "(8, 2)"]),
        ({"vertices": np.zeros(24)}, ["vertices", "(N, 3)", "(24,)"]),
        ({"tets": np.zeros((5, 3), dtype=int)}, ["tets", "(N, 4)", "(5, 3)"]),
        ({"tets": np.zeros((5, 4))}, ["tets", "integer", "float64"]),
        ({"vertices": np.array([["a", "b", "c"]])}, ["vertices", "dtype"]),
        ({"triangles": np.zeros((2, 4), dtype=int)}, ["triangles", "(N, 3)"]),
        ({"edges": np.zeros((2, 3), dtype=int)}, ["edges", "(N, 2)"]),
    ],
)
def test_wrong_shapes_and_dtypes_name_the_argument(kwargs: dict, words: list[str]) -> None:
    v, t = box_mesh(1)
    args = {"vertices": v, "tets": t, **kwargs}
    with pytest.raises(ValueError) as e:
        add(**args)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_out_of_range_negative_and_inverted_tets_are_refused() -> None:
    v, t = box_mesh(1)
    bad = t.copy()
    bad[3, 2] = 8
    with pytest.raises(ValueError, match=r"cube\.tets: index out of range: tet 3 references vertex 8 but there are 8 vertices"):
        add(vertices=v, tets=bad)
    bad = t.copy()
    bad[1, 0] = -1
    with pytest.raises(ValueError, match=r"tets: row 1 holds the negative index -1"):
        add(vertices=v, tets=bad)
    bad = t.copy()
    bad[0, [2, 3]] = bad[0, [3, 2]]
    with pytest.raises(ValueError, match=r"inverted tetrahedron: tet 0"):
        add(vertices=v, tets=bad)
    nan = v.copy()
    nan[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"cube\.vertices: non-finite coordinate: vertex 2"):
        add(vertices=nan, tets=t)
    with pytest.raises(ValueError, match=r"tets: row 0 holds the negative index -3"):
        add(vertices=v, tets=np.full((2, 4), -3, dtype=np.int8))
    with pytest.raises(ValueError, match=r"index 4294967296 is out of range"):
        add(vertices=v, tets=np.full((1, 4), 2**32, dtype=np.uint64))


def test_geometry_and_scene_settings_errors_name_the_field() -> None:
    v, t = box_mesh(1)
    with pytest.raises(ValueError, match="exactly one of vertices"):
        supple.SceneBuilder().body("b", material=SOLID)
    with pytest.raises(ValueError, match="material is required"):
        supple.SceneBuilder().body("b", vertices=v, tets=t)
    with pytest.raises(ValueError, match="simulation.substeps"):
        supple.SceneBuilder().set("simulation.substeps", 0)
    with pytest.raises(ValueError, match="solver"):
        supple.SceneBuilder(solver="no-such-solver")
    with pytest.raises(ValueError, match="mesh.triangles"):
        # A cloth needs triangles: found by the model check in build(), before the device.
        supple.SceneBuilder().body(
            "c", vertices=v, tets=t, material=supple.material("cloth", 1e6, 0.3, 200.0, thickness=1e-3)
        ).build()


def test_unreadable_scene_files_are_os_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        supple.Simulation.from_toml(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[simulation]\nframe_rate = -1.0\n")
    with pytest.raises(ValueError, match="frame_rate"):
        supple.Simulation.from_toml(bad)
