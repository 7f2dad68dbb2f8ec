#!/usr/bin/env python3
"""Opens a .usda stage written by Supple's USD exporter with Pixar's USD library (`pip install
usd-core`) and checks it: stage metadata (metersPerUnit = 1, upAxis Z, time codes), the
UsdGeom.Mesh prim's point count in every time sample, its topology, extents, and optionally the
UsdGeom.TetMesh prim (tet count, point counts per sample, positive orientation, surface faces),
and optionally the UsdGeom.BasisCurves prim of rods (linear, vertex counts, points per sample,
one width per curve, extents as USD computes them).

Usage: check_usd.py STAGE.usda --mesh /World/body --points N --frames F
                    [--tetmesh /World/body_tets --tet-points N --tets T]
                    [--curves /World/body_curves --curve-counts N1,N2,...]
Prints "USD check OK: ..." and exits 0, or prints the problems and exits 1.
"""

import argparse
import sys

from pxr import Usd, UsdGeom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage")
    ap.add_argument("--mesh", required=True)
    ap.add_argument("--points", type=int, required=True)
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
