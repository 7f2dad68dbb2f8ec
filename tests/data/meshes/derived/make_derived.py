#!/usr/bin/env python3
"""Regenerates the files of tests/data/meshes/derived/ from the corpus' tiny unit cube
(tests/data/meshes/bad/base/tiny.node / tiny.ele, TetGen 1.5.0 output, 1-based).

- tiny_tetgen_one_based.vtk: the cube in the legacy VTK layout TetGen 1.5's `-k` writer uses,
  with the 1-based point numbers of the .ele copied unshifted into CELLS (the writer's bug: the
  largest id equals the point count).
- usd/*.usda: stages written by Pixar's USD library (usd-core; `pip install usd-core`), so the
  USD reader is tested on files Supple did not write:
  - tiny_tetmesh_xform.usda: a UsdGeom.TetMesh of the cube (surface faces computed by USD) under
    an Xform with translate / rotateXYZ / scale ops.
  - cube_quads_lefthanded_cm.usda: a closed quad cube (1 m side, written in centimetres with
    metersPerUnit = 0.01, upAxis Y), leftHanded orientation, points time-sampled at 0 and 1.
  - two_bodies_and_collider.usda: two triangle Mesh prims, a linear BasisCurves prim and a
    Sphere collider prim.
- expected.json: what USD itself computes for these stages (world-space bounding boxes, point
  and face counts), for the tests to compare with.

Usage: python3 make_derived.py   (run in this folder)
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "bad", "base")


def read_tetgen():
    with open(os.path.join(BASE, "tiny.node")) as f:
        rows = [l.split() for l in f if l.strip() and not l.lstrip().startswith("#")]
    n = int(rows[0][0])
    ids, pts = [], []
    for r in rows[1 : 1 + n]:
        ids.append(int(r[0]))
        pts.append(tuple(float(x) for x in r[1:4]))
    with open(os.path.join(BASE, "tiny.ele")) as f:
        rows = [l.split() for l in f if l.strip() and not l.lstrip().startswith("#")]
    m = int(rows[0][0])
    tets = [tuple(int(x) for x in r[1:5]) for r in rows[1 : 1 + m]]
    return ids, pts, tets


def write_vtk(ids, pts, tets):
    assert ids[0] == 1 and ids == list(range(1, len(ids) + 1))
    lines = [
        "# vtk DataFile Version 2.0",
        "Unstructured Grid",
        "ASCII",
        "DATASET UNSTRUCTURED_GRID",
        f"POINTS {len(pts)} double",
    ]
    lines += [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts]
    lines.append("")
    lines.append(f"CELLS {len(tets)} {5 * len(tets)}")
    # TetGen 1.5 writes the .ele numbers without subtracting the first index.
    lines += ["4  %4d %4d %4d %4d" % t for t in tets]
    lines.append(f"CELL_TYPES {len(tets)}")
    lines += ["10"] * len(tets)
    with open(os.path.join(HERE, "tiny_tetgen_one_based.vtk"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_usd(pts, tets):
    from pxr import Gf, Usd, UsdGeom, Vt

    out = os.path.join(HERE, "usd")
    os.makedirs(out, exist_ok=True)
    expected = {}

    def world_bbox(stage, path, time=Usd.TimeCode.Default()):
        prim = stage.GetPrimAtPath(path)
        pb = UsdGeom.PointBased(prim)
        xf = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(time)
        mpu = UsdGeom.GetStageMetersPerUnit(stage)
        world = [xf.Transform(Gf.Vec3d(p)) * mpu for p in pb.GetPointsAttr().Get(time)]
        lo = [min(p[k] for p in world) for k in range(3)]
        hi = [max(p[k] for p in world) for k in range(3)]
        return [lo, hi], len(world)

    # 1. TetMesh under a transformed Xform.
    path = os.path.join(out, "tiny_tetmesh_xform.usda")
    stage = Usd.Stage.CreateNew(path)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    xf = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(xf.GetPrim())
    xf.AddTranslateOp().Set(Gf.Vec3d(1.0, 2.0, 3.0))
    xf.AddRotateXYZOp().Set(Gf.Vec3f(30.0, 0.0, 90.0))
    xf.AddScaleOp().Set(Gf.Vec3f(2.0, 2.0, 2.0))
    tm = UsdGeom.TetMesh.Define(stage, "/World/cube")
    tm.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*p) for p in pts]))
    tm.CreateTetVertexIndicesAttr(Vt.Vec4iArray([Gf.Vec4i(*(i - 1 for i in t)) for t in tets]))
    faces = UsdGeom.TetMesh.ComputeSurfaceFaces(tm, Usd.TimeCode.Default())
    tm.CreateSurfaceFaceVertexIndicesAttr(faces)
    stage.GetRootLayer().Save()
    bbox, n = world_bbox(stage, "/World/cube")
    expected["tiny_tetmesh_xform.usda"] = {
        "points": n,
        "tets": len(tets),
        "surface_faces": len(faces),
        "bbox": bbox,
        "volume": 8.0,
    }

    # 2. Quad cube in centimetres, left-handed, time-sampled.
    path = os.path.join(out, "cube_quads_lefthanded_cm.usda")
    stage = Usd.Stage.CreateNew(path)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    root = UsdGeom.Xform.Define(stage, "/Root")
    stage.SetDefaultPrim(root.GetPrim())
    mesh = UsdGeom.Mesh.Define(stage, "/Root/box")
    corners = [Gf.Vec3f(x, y, z) for z in (0, 100) for y in (0, 100) for x in (0, 100)]
    # Quads wound clockwise seen from outside (left-handed = outward for USD).
    quads = [
        (0, 1, 3, 2), (4, 6, 7, 5),  # z = 0, z = 100
        (0, 4, 5, 1), (2, 3, 7, 6),  # y = 0, y = 100
        (0, 2, 6, 4), (1, 5, 7, 3),  # x = 0, x = 100
    ]
    mesh.CreateFaceVertexCountsAttr([4] * 6)
    mesh.CreateFaceVertexIndicesAttr([i for q in quads for i in q])
    mesh.CreateOrientationAttr(UsdGeom.Tokens.leftHanded)
    pts_attr = mesh.CreatePointsAttr()
    pts_attr.Set(Vt.Vec3fArray(corners), 0.0)
    pts_attr.Set(Vt.Vec3fArray([c * 3 for c in corners]), 1.0)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(1)
    stage.GetRootLayer().Save()
    bbox, n = world_bbox(stage, "/Root/box", Usd.TimeCode(0))
    # USD's own view: left-handed quads wound as above face outward.
    expected["cube_quads_lefthanded_cm.usda"] = {
        "points": n,
        "triangles": 12,
        "bbox": bbox,
        "volume": 1.0,
    }

    # 3. Two triangle meshes, a linear curve and a Sphere collider.
    path = os.path.join(out, "two_bodies_and_collider.usda")
    stage = Usd.Stage.CreateNew(path)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    tet_pts = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    tet_tris = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    for name, off in (("a", 0.0), ("b", 5.0)):
        m = UsdGeom.Mesh.Define(stage, f"/World/{name}")
        m.CreatePointsAttr([Gf.Vec3f(x + off, y, z) for x, y, z in tet_pts])
        m.CreateFaceVertexCountsAttr([3] * 4)
        m.CreateFaceVertexIndicesAttr([i for t in tet_tris for i in t])
    c = UsdGeom.BasisCurves.Define(stage, "/World/rod")
    c.CreateTypeAttr(UsdGeom.Tokens.linear)
    c.CreateCurveVertexCountsAttr([3])
    c.CreatePointsAttr([Gf.Vec3f(0, 0, 3), Gf.Vec3f(1, 0, 3), Gf.Vec3f(2, 0, 3)])
    s = UsdGeom.Sphere.Define(stage, "/World/ground_ball")
    s.CreateRadiusAttr(0.5)
    s.AddTranslateOp().Set(Gf.Vec3d(0, 0, -1))
    stage.GetRootLayer().Save()
    expected["two_bodies_and_collider.usda"] = {
        "points": 11,
        "triangles": 8,
        "polylines": 1,
        "volume": 2.0 / 6.0,
        "b_bbox": world_bbox(stage, "/World/b")[0],
    }

    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    ids, pts, tets = read_tetgen()
    write_vtk(ids, pts, tets)
    write_usd(pts, tets)
