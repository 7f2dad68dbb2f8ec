#!/usr/bin/env python3
"""Side-by-side proximity search: `supple bench proximity` (GPU spatial hashing + exact distance
filter, on the Vulkan device Supple picks, lavapipe here) against the IPC Toolkit (ipctk) on the
same mesh and distance, in the same run.

ipctk side, for each broad phase (HashGrid, SweepAndPrune, BVH, LBVH where available), timed as the
median of --reps repetitions after one warm-up:
  Candidates.build(mesh, V, inflation_radius = D / 2)   (broad phase: AABBs inflated by D/2,
                                                        i.e. every pair of primitives whose
                                                        distance can be < D)
  NormalCollisions.build(candidates, mesh, V, dhat = D)  (exact distance of every candidate,
                                                        keeps those < D)
The fastest broad phase + distance filter total is the baseline; ratio = ipctk_ms / supple_ms
(> 1: Supple is faster). Vertex positions are the mesh as loaded (no deformation), D is given
in mesh units (--distance) or as a multiple of the mean edge length (--distance-scale).

Usage: python3 benches/bench_proximity_vs_ipctk.py --mesh tests/data/meshes/surface/bunny.ply \
           --distance-scale 0.5 [--supple target/release/supple] [--reps 15] [--threads 2]
Prints one JSON object on stdout.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import ipctk

from check_frames_ipctk import read_obj


def load_with_supple(supple, mesh):
    """Vertices/faces as Supple loads them: converts to OBJ with `supple mesh convert`."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "mesh.obj")
        subprocess.run([supple, "mesh", "convert", mesh, out], check=True,
                       stdout=subprocess.DEVNULL)
        return read_obj(out)


def timed(fn, reps):
    out = fn()  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts), out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--mesh", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--distance", type=float)
    g.add_argument("--distance-scale", type=float)
    ap.add_argument("--supple", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target")), "release", "supple"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=0, help="ipctk (TBB) threads; 0 = default")
    args = ap.parse_args()
    if args.threads > 0:
        ipctk.set_num_threads(args.threads)

    V, F = load_with_supple(args.supple, args.mesh)
    # Same frame as `supple bench proximity`: relative to the bounding-box centre.
    V = V - 0.5 * (V.min(axis=0) + V.max(axis=0))
    E = ipctk.edges(F)
    cmesh = ipctk.CollisionMesh(V, E, F)
    ell = float(np.linalg.norm(V[E[:, 0]] - V[E[:, 1]], axis=1).mean())
    D = args.distance if args.distance is not None else args.distance_scale * ell

    cmd = [args.supple, "bench", "proximity", "--mesh", args.mesh, "--distance", repr(D),
           "--repeat", str(args.reps), "--json"]
    sup = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    res = {"mesh": args.mesh, "vertices": int(V.shape[0]), "faces": int(F.shape[0]),
           "edges": int(E.shape[0]), "mean_edge": ell, "distance": D,
           "ipctk_version": None, "ipctk_threads": ipctk.get_num_threads(), "supple": sup}
    try:
        import importlib.metadata as md
        res["ipctk_version"] = md.version("ipctk")
    except Exception:  # noqa: BLE001
        pass

    phases = [("hashgrid", "HashGrid"), ("sap", "SweepAndPrune"), ("bvh", "BVH"),
              ("lbvh", "LBVH")]
    best = None
    for name, cls in phases:
        ctor = getattr(ipctk, cls, None)
        if ctor is None:
            continue

        def bp(ctor=ctor):
            c = ipctk.Candidates()
            c.build(cmesh, V, D / 2.0, broad_phase=ctor())
            return c

        ms_bp, cands = timed(bp, args.reps)

        def dist(cands=cands):
            col = ipctk.NormalCollisions()
            col.build(cands, cmesh, V, D)
            return col

        ms_d, col = timed(dist, args.reps)
        row = {"broad_phase_ms": ms_bp, "distance_filter_ms": ms_d, "total_ms": ms_bp + ms_d,
               "candidates": len(cands), "fv_candidates": len(cands.fv_candidates),
               "ee_candidates": len(cands.ee_candidates), "collisions": len(col)}
        res[f"ipctk_{name}"] = row
        if best is None or row["total_ms"] < res[f"ipctk_{best}"]["total_ms"]:
            best = name
        print(f"ipctk {name}: {row}", file=sys.stderr)

    supple_ms = sup["ms_per_search_wall_median"]
    res["ipctk_best"] = best
    res["ipctk_best_ms"] = res[f"ipctk_{best}"]["total_ms"]
    res["supple_ms"] = supple_ms
    res["ratio_ipctk_over_supple"] = res["ipctk_best_ms"] / supple_ms
    print(f"supple: {supple_ms:.2f} ms ({sup['pairs_vertex_triangle']} vt + "
          f"{sup['pairs_edge_edge']} ee pairs); ipctk best ({best}): {res['ipctk_best_ms']:.2f} ms;"
          f" ratio ipctk/supple = {res['ratio_ipctk_over_supple']:.3f}", file=sys.stderr)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
