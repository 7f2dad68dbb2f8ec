#!/usr/bin/env python3
"""Opens a .usda stage written by Supple's USD exporter with Pixar's USD library (`pip install
usd-core`) and checks it: stage metadata (metersPerUnit = 1, upAxis Z, time codes), the
UsdGeom.Mesh prim's point count in every time sample, its topology, extents, and optionally the
UsdGeom.TetMesh prim (tet count, point counts per sample, positive orientation, surface faces),
and optionally the UsdGeom.BasisCurves prim of rods (linear, vertex counts, points per sample,
one width per curve, extents as USD computes them).

Stages of several bodies (what `supple run --export usd` writes) are checked prim by prim:
`--body PATH=TYPE:POINTS` (TYPE Mesh or BasisCurves: type, points time-sampled at every frame,
POINTS points in each sample, or `*`: the same positive count in each), `--collider PATH=TYPE[:moving]` (TYPE Sphere, Cube or Mesh: type,
an xformOp:translate that is time-sampled at every frame and moves when `moving`, else static;
a Cube has size 1 and a scale op, a Sphere a positive radius, a Mesh one quad), `--fps F`
(timeCodesPerSecond = framesPerSecond = F) and `--exact` (the stage holds no other geometry).

Usage: check_usd.py STAGE.usda --frames F [--fps F]
                    [--mesh /World/body --points N]
                    [--tetmesh /World/body_tets --tet-points N --tets T]
                    [--curves /World/body_curves --curve-counts N1,N2,...]
                    [--body /World/NAME=Mesh:N]... [--collider /World/colliders/NAME=Sphere[:moving]]...
                    [--exact]
Prints "USD check OK: ..." and exits 0, or prints the problems and exits 1.
"""

import argparse
import sys

from pxr import Usd, UsdGeom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage")
    ap.add_argument("--mesh")
    ap.add_argument("--points", type=int)
    ap.add_argument("--body", action="append", default=[])
    ap.add_argument("--collider", action="append", default=[])
    ap.add_argument("--fps", type=float)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--frames", type=int, required=True)
    ap.add_argument("--tetmesh")
    ap.add_argument("--tet-points", type=int)
    ap.add_argument("--tets", type=int)
    ap.add_argument("--curves")
    ap.add_argument("--curve-counts")
    a = ap.parse_args()

    problems = []

    def check(cond, msg):
        if not cond:
            problems.append(msg)

    stage = Usd.Stage.Open(a.stage)
    check(stage is not None, "stage did not open")
    if stage is None:
        print("\n".join(problems))
        return 1
    check(UsdGeom.GetStageMetersPerUnit(stage) == 1.0, "metersPerUnit != 1")
    check(UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z, "upAxis != Z")
    check(stage.GetStartTimeCode() == 0, f"startTimeCode {stage.GetStartTimeCode()}")
    check(stage.GetEndTimeCode() == a.frames - 1, f"endTimeCode {stage.GetEndTimeCode()}")
    check(stage.GetTimeCodesPerSecond() > 0, "timeCodesPerSecond")
    check(stage.GetDefaultPrim().IsValid(), "no default prim")

    summary = f"{a.frames} frames"
    if a.fps is not None:
        check(stage.GetTimeCodesPerSecond() == a.fps, f"timeCodesPerSecond {stage.GetTimeCodesPerSecond()} != {a.fps}")
        check(stage.GetFramesPerSecond() == a.fps, f"framesPerSecond {stage.GetFramesPerSecond()} != {a.fps}")
    counts = []
    if a.mesh:
        prim = stage.GetPrimAtPath(a.mesh)
        check(prim.IsValid() and prim.IsA(UsdGeom.Mesh), f"{a.mesh} is not a UsdGeom.Mesh")
        mesh = UsdGeom.Mesh(prim)
        times = mesh.GetPointsAttr().GetTimeSamples()
        check(list(times) == [float(t) for t in range(a.frames)], f"mesh time samples {list(times)}")
        counts = mesh.GetFaceVertexCountsAttr().Get()
        idx = mesh.GetFaceVertexIndicesAttr().Get()
        check(counts is not None and all(c == 3 for c in counts), "faceVertexCounts not all 3")
        check(idx is not None and len(idx) == 3 * len(counts), "faceVertexIndices length")
        check(not len(idx) or (max(idx) < a.points and min(idx) >= 0), "faceVertexIndices out of range")
        for t in times:
            pts = mesh.GetPointsAttr().Get(t)
            check(len(pts) == a.points, f"mesh points at t={t}: {len(pts)} != {a.points}")
            ext = mesh.GetExtentAttr().Get(t)
            check(ext is not None and len(ext) == 2, f"extent at t={t}")
            if ext is not None and len(pts):
                lo = [min(p[k] for p in pts) for k in range(3)]
                hi = [max(p[k] for p in pts) for k in range(3)]
                check(all(abs(lo[k] - ext[0][k]) < 1e-6 and abs(hi[k] - ext[1][k]) < 1e-6 for k in range(3)), f"extent at t={t}")
        summary = f"Mesh {a.mesh}: {len(times)} samples x {a.points} points, {len(counts)} triangles"

    all_frames = [float(t) for t in range(a.frames)]
    gprims = []
    for spec in a.body:
        path, kind = spec.split("=")
        typ, npts = kind.split(":")
        gprims.append(path)
        prim = stage.GetPrimAtPath(path)
        schema = {"Mesh": UsdGeom.Mesh, "BasisCurves": UsdGeom.BasisCurves}[typ]
        check(prim.IsValid() and prim.IsA(schema), f"{path} is not a UsdGeom.{typ}")
        if not prim.IsValid():
            continue
        pa = UsdGeom.PointBased(prim).GetPointsAttr()
        times = list(pa.GetTimeSamples())
        check(times == all_frames, f"{path}: points time samples {times}")
        sizes = [len(pa.Get(t)) for t in times]
        if npts == "*":
            # Any count, the same in every sample.
            npts = sizes[0] if sizes else 0
            check(npts > 0, f"{path}: no points")
        for t, n in zip(times, sizes):
            check(n == int(npts), f"{path}: {n} points at t={t}, expected {npts}")
        summary += f"; {typ} {path}: {len(times)} x {npts} points"
    for spec in a.collider:
        path, kind = spec.split("=")
        typ, _, moving = kind.partition(":")
        gprims.append(path)
        prim = stage.GetPrimAtPath(path)
        schema = {"Sphere": UsdGeom.Sphere, "Cube": UsdGeom.Cube, "Mesh": UsdGeom.Mesh}[typ]
        check(prim.IsValid() and prim.IsA(schema), f"{path} is not a UsdGeom.{typ}")
        if not prim.IsValid():
            continue
        xf = UsdGeom.Xformable(prim)
        ops = {op.GetOpName(): op for op in xf.GetOrderedXformOps()}
        check("xformOp:translate" in ops, f"{path}: no xformOp:translate ({list(ops)})")
        if "xformOp:translate" in ops:
            times = list(ops["xformOp:translate"].GetAttr().GetTimeSamples())
            if moving:
                check(times == all_frames, f"{path}: translate time samples {times}")
                if times:
                    p0 = ops["xformOp:translate"].Get(times[0])
                    p1 = ops["xformOp:translate"].Get(times[-1])
                    check(p0 != p1, f"{path}: a moving collider does not move ({p0})")
            else:
                check(times == [], f"{path}: a static collider has translate time samples {times}")
        if typ == "Cube":
            check(UsdGeom.Cube(prim).GetSizeAttr().Get() == 1.0, f"{path}: Cube size != 1")
            check("xformOp:scale" in ops, f"{path}: Cube without a scale op")
        if typ == "Sphere":
            r = UsdGeom.Sphere(prim).GetRadiusAttr().Get()
            check(r is not None and r > 0, f"{path}: Sphere radius {r}")
        if typ == "Mesh":
            m = UsdGeom.Mesh(prim)
            check(list(m.GetFaceVertexCountsAttr().Get() or []) == [4], f"{path}: not one quad")
            check(len(m.GetPointsAttr().Get() or []) == 4, f"{path}: not 4 points")
        summary += f"; {typ} {path}" + (" (moving)" if moving else "")
    if a.exact:
        found = sorted(str(p.GetPath()) for p in stage.Traverse() if p.IsA(UsdGeom.Gprim))
        want = sorted(gprims + ([a.mesh] if a.mesh else []) + ([a.tetmesh] if a.tetmesh else [])
                      + ([a.curves] if a.curves else []))
        check(found == want, f"geometry prims {found} != {want}")

    if a.tetmesh:
        if not hasattr(UsdGeom, "TetMesh"):
            problems.append("this USD build has no UsdGeom.TetMesh (needs USD >= 24.03)")
        else:
            tprim = stage.GetPrimAtPath(a.tetmesh)
            check(tprim.IsValid() and tprim.IsA(UsdGeom.TetMesh), f"{a.tetmesh} is not a UsdGeom.TetMesh")
            tm = UsdGeom.TetMesh(tprim)
            tets = tm.GetTetVertexIndicesAttr().Get()
            check(tets is not None and len(tets) == a.tets, f"tetVertexIndices: {0 if tets is None else len(tets)} != {a.tets}")
            ttimes = tm.GetPointsAttr().GetTimeSamples()
            check(list(ttimes) == [float(t) for t in range(a.frames)], f"tet time samples {list(ttimes)}")
            for t in ttimes:
                pts = tm.GetPointsAttr().Get(t)
                check(len(pts) == a.tet_points, f"tet points at t={t}: {len(pts)} != {a.tet_points}")
            check(tm.GetOrientationAttr().Get() == UsdGeom.Tokens.rightHanded, "TetMesh orientation")
            pts = tm.GetPointsAttr().Get(0)
            neg = 0
            for q in tets:
                p = [pts[q[i]] for i in range(4)]
                u, v, w = (p[1] - p[0]), (p[2] - p[0]), (p[3] - p[0])
                if (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])) <= 0:
                    neg += 1
            check(neg == 0, f"{neg} tets not positively oriented (right-handed)")
            faces = tm.GetSurfaceFaceVertexIndicesAttr().Get()
            check(faces is not None and len(faces) == len(counts), "surfaceFaceVertexIndices count != Mesh triangles")
            if hasattr(UsdGeom.TetMesh, "ComputeSurfaceFaces"):
                computed = UsdGeom.TetMesh.ComputeSurfaceFaces(tm, Usd.TimeCode.Default())
                key = lambda f: tuple(sorted((f[0], f[1], f[2])))
                check(sorted(map(key, computed)) == sorted(map(key, faces)), "surface faces differ from UsdGeom.TetMesh.ComputeSurfaceFaces")
            summary += f"; TetMesh {a.tetmesh}: {len(tets)} tets, {len(ttimes)} samples x {a.tet_points} points"

    if a.curves:
        cprim = stage.GetPrimAtPath(a.curves)
        check(cprim.IsValid() and cprim.IsA(UsdGeom.BasisCurves), f"{a.curves} is not a UsdGeom.BasisCurves")
        bc = UsdGeom.BasisCurves(cprim)
        want = [int(c) for c in (a.curve_counts or "").split(",") if c]
        counts = list(bc.GetCurveVertexCountsAttr().Get() or [])
        check(counts == want, f"curveVertexCounts {counts} != {want}")
        check(bc.GetTypeAttr().Get() == UsdGeom.Tokens.linear, f"curve type {bc.GetTypeAttr().Get()}")
        widths = bc.GetWidthsAttr().Get()
        if widths is not None:
            check(len(widths) == len(want) and bc.GetWidthsInterpolation() == UsdGeom.Tokens.uniform,
                  f"widths {list(widths)} ({bc.GetWidthsInterpolation()}) for {len(want)} curves")
        ctimes = bc.GetPointsAttr().GetTimeSamples()
        check(list(ctimes) == [float(t) for t in range(a.frames)], f"curve time samples {list(ctimes)}")
        for t in ctimes:
            pts = bc.GetPointsAttr().Get(t)
            check(len(pts) == sum(want), f"curve points at t={t}: {len(pts)} != {sum(want)}")
            ext = bc.GetExtentAttr().Get(t)
            computed = UsdGeom.Boundable.ComputeExtentFromPlugins(bc, Usd.TimeCode(t))
            check(ext is not None and computed is not None
                  and all(abs(ext[i][k] - computed[i][k]) < 1e-5 for i in range(2) for k in range(3)),
                  f"curve extent at t={t}: {ext} vs computed {computed}")
        summary += f"; BasisCurves {a.curves}: {len(counts)} curves, {len(ctimes)} samples x {sum(want)} points"

    if problems:
        print("USD check FAILED:")
        print("\n".join("  " + p for p in problems))
        return 1
    print(f"USD check OK: {summary} (usd-core {Usd.GetVersion()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
