#!/usr/bin/env bash
# Colliders that are never entered (issue 26, item 1), over full scenes: for every scene in
# scenes/ with colliders (or the scenes given as arguments), `supple run SCENE --export obj`
# then `supple check-frames OUT --scene SCENE --json` (every exported vertex of every frame
# against every collider at the frame's time, in f64 from the exported files). Prints one JSON
# line per scene on stdout: scene, frames, collider_frames (frames with a vertex closer to a
# collider than its offset: 0 is the target), min_collider_distance (m, the smallest signed
# distance minus offset in any frame, from report.json's `collider_distance`), run seconds;
# progress on stderr. Exit 1 when any scene has a finding.
#
# Environment: CARGO_TARGET_DIR (default target), SKIP_BUILD=1 (use the CLI already built),
# FRAMES (override every scene's frame count), OUT (work folder, default a temporary one).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-target}"
log() { echo "[colliders_never_entered] $*" >&2; }
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    log "building the CLI (cargo build --release -p supple-tools)"
    cargo build --release -p supple-tools >&2
fi
SUPPLE="$TARGET/release/supple"
[[ -x "$SUPPLE" ]] || { log "no CLI at $SUPPLE"; exit 1; }
WORK="${OUT:-$(mktemp -d)}"
mkdir -p "$WORK"
if [[ $# -gt 0 ]]; then
    scenes=("$@")
else
    mapfile -t scenes < <(grep -l '^\[\[collider\]\]' scenes/*.toml | sort)
fi
status=0
for scene in "${scenes[@]}"; do
    name="$(basename "$scene" .toml)"
    out="$WORK/$name"
    rm -rf "$out"
    args=(run "$scene" --export obj --out "$out")
    [[ -n "${FRAMES:-}" ]] && args+=(--frames "$FRAMES")
    log "$name: supple ${args[*]}"
    t0=$(date +%s.%N)
    if ! "$SUPPLE" "${args[@]}" >"$out.log" 2>&1; then
        log "$name: run failed (see $out.log)"
        echo "{\"scene\": \"$name\", \"error\": \"run failed\"}"
        status=1
        continue
    fi
    t1=$(date +%s.%N)
    check="$("$SUPPLE" check-frames "$out" --scene "$scene" --json 2>>"$out.log" || true)"
    python3 - "$name" "$out/report.json" "$t0" "$t1" "$check" <<'PY' || status=1
import json, math, sys
name, report, t0, t1, check = sys.argv[1:6]
r = json.load(open(report))
c = json.loads(check)
d = [x for f in r["frames"] for x in f.get("collider_distance", []) if x is not None]
out = {
    "scene": name,
    "frames": c.get("frames"),
    "collider_frames": c.get("collider_frames"),
    "min_collider_distance": min(d) if d else None,
    "check_min_collider_distance": c.get("min_collider_distance"),
    "run_s": round(float(t1) - float(t0), 1),
    "ms_per_frame_median": r.get("ms_per_frame_median"),
}
print(json.dumps(out), flush=True)
sys.exit(0 if out["collider_frames"] == 0 and (not d or min(d) >= 0.0) else 1)
PY
done
exit $status
