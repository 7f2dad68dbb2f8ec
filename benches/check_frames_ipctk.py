#!/usr/bin/env python3
"""Third-party check of exported frames: the IPC Toolkit (ipctk, `pip install ipctk`) on
`supple run SCENE --export obj --out DIR` output, independent of Supple's own checker
(`supple check-frames`).

For every frame DIR/frames/frame_NNNN.obj: `ipctk.has_intersections` (triangle-edge
intersections within the frame); for every pair of consecutive frames:
`ipctk.is_step_collision_free` on the straight-line motion between them (Tight Inclusion CCD).
Triangle meshes only (OBJ `v` and `f`; rod polylines are ignored). Prints one JSON object:
frames, intersecting_frames, colliding_transitions and the first few problems. Exit code 1 if any
frame intersects or any transition collides, 2 on bad input.

Usage: python3 benches/check_frames_ipctk.py DIR/frames [--every K]
"""

import argparse
import glob
import json
import os
import sys

import numpy as np

import ipctk


def read_obj(path):
    v, f = [], []
    with open(path) as fh:
        for line_no, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                if parts[0] == "v":
                    v.append([float(t) for t in parts[1:4]])
                elif parts[0] == "f":
                    f.append([int(t.split("/")[0]) - 1 for t in parts[1:4]])
            except ValueError as e:
                sys.exit(f"{path}:{line_no}: {e}")
    return np.array(v, dtype=np.float64), np.array(f, dtype=np.int64).reshape(-1, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("frames_dir")
    ap.add_argument("--every", type=int, default=1, help="check every K-th frame only")
    a = ap.parse_args()
    paths = sorted(glob.glob(os.path.join(a.frames_dir, "frame_*.obj")))[:: max(a.every, 1)]
    if not paths:
        print(f"{a.frames_dir}: no frame_*.obj files", file=sys.stderr)
        sys.exit(2)
    v0, faces = read_obj(paths[0])
    if len(faces) == 0:
        print(f"{paths[0]}: no triangles", file=sys.stderr)
        sys.exit(2)
    edges = ipctk.edges(faces)
    mesh = ipctk.CollisionMesh(v0, edges, faces)
    problems, intersecting, colliding = [], 0, 0
    prev = None
    for p in paths:
        v, f = read_obj(p)
        if v.shape != v0.shape or not np.array_equal(f, faces):
            print(f"{p}: different mesh from {paths[0]}", file=sys.stderr)
            sys.exit(2)
        if ipctk.has_intersections(mesh, v):
            intersecting += 1
            problems.append(f"{os.path.basename(p)}: intersecting")
        if prev is not None and not ipctk.is_step_collision_free(mesh, prev[1], v):
            colliding += 1
            problems.append(f"{os.path.basename(prev[0])} -> {os.path.basename(p)}: colliding motion")
        prev = (p, v)
    out = {
        "checker": f"ipctk {ipctk.__version__}",
        "frames": len(paths),
        "intersecting_frames": intersecting,
        "colliding_transitions": colliding,
        "problems": problems[:10],
    }
    print(json.dumps(out))
    sys.exit(1 if intersecting or colliding else 0)


if __name__ == "__main__":
    main()
