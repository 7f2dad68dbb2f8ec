#!/usr/bin/env bash
# Scaling benchmark (issue 22, item 5): Supple and the peer (NVIDIA's Newton engine, VBD, Warp's
# CPU device, one core) side by side, in one run, over
#   * the tet cube drop (Scene B of $PEERS_DIR/README.md) at 10, 20 and 30 cells of 0.05 m per
#     side (cube side 0.5, 1.0, 1.5 m, bottom face at 0.10 m):
#     `supple bench scene scenes/tet_cube_drop.toml --set 'body[0].mesh.cells=[N,N,N]' ...` and
#     `bench_tetcube_newton.py --solver vbd --tile 1 --cells N`;
#   * the cloth dropped on the sphere (Scene A) at N = 32, 64, 128 vertices per side:
#     `supple bench scene scenes/cloth_sphere_64.toml --set 'body[0].mesh.cells=[N-1,N-1,1]'`
#     (above N = 64 also `--set collision.d_min=... --set collision.d_max=...`, scaled with the
#     edge length: 2 and 4 mm at N = 128) and `bench_cloth_newton.py --solver vbd --n N`.
# Supple runs twice per case: with every lavapipe thread and with LP_NUM_THREADS=1 (the peer uses
# one core). Prints one JSON line per case on stdout: the case, vertices and elements, Supple's
# ms/frame (both thread counts) and counters (host waits, submits, dispatches per frame,
# device_bytes, device bytes per element, Newton/PCG iterations, largest PCG residual), the
# peer's ms/frame and the ratios peer/Supple. Progress goes to stderr.
#
# Environment: CASES (default "cube10 cube20 cube30 cloth32 cloth64 cloth128"), FRAMES (timed
# frames per run, default 4; the peer times the same number after one warm-up frame),
# PEERS_DIR (default ../shared/peers), PEERS_VENV (a virtual environment with numpy, warp-lang
# and newton; default .venv-peers; never installed by this script: create it with
# `python3 -m venv .venv-peers && .venv-peers/bin/pip install numpy warp-lang newton`),
# WARP_CACHE_PATH (default $PEERS_VENV/warp-cache), CARGO_TARGET_DIR (default target),
# SKIP_BUILD=1 (use the CLI already built), SKIP_PEER=1 (Supple only), SKIP_ONE_THREAD=1.
# Without the peer's environment the peer fields are null and "peer_error" says why; the
# script still exits 0 (exit 1 only when Supple fails).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PEERS_DIR="${PEERS_DIR:-../shared/peers}"
VENV="${PEERS_VENV:-.venv-peers}"
FRAMES="${FRAMES:-4}"
TARGET="${CARGO_TARGET_DIR:-target}"
CASES="${CASES:-cube10 cube20 cube30 cloth32 cloth64 cloth128}"
log() { echo "[bench_scaling] $*" >&2; }

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    log "building the CLI (cargo build --release -p supple-tools)"
    cargo build --release -p supple-tools >&2
fi
SUPPLE="$TARGET/release/supple"
[[ -x "$SUPPLE" ]] || { log "no CLI at $SUPPLE"; exit 1; }

peer_ready=""
if [[ "${SKIP_PEER:-0}" == 1 ]]; then
    peer_ready="skipped (SKIP_PEER=1)"
elif [[ ! -d "$PEERS_DIR" ]]; then
    peer_ready="peer scripts not found in $PEERS_DIR (set PEERS_DIR)"
elif ! "$VENV/bin/python" -c "import numpy, warp, newton" 2>/dev/null; then
    peer_ready="no Python environment with numpy, warp and newton at $VENV (set PEERS_VENV, or create it: python3 -m venv $VENV && $VENV/bin/pip install numpy warp-lang newton)"
fi
[[ -n "$peer_ready" ]] && log "peer unavailable: $peer_ready"
if [[ -z "$peer_ready" ]]; then
    WARP_CACHE_PATH="${WARP_CACHE_PATH:-$(cd "$VENV" && pwd)/warp-cache}"
    export WARP_CACHE_PATH
fi

for case in $CASES; do
    case "$case" in
    cube*)
        n="${case#cube}"
        side="$(python3 -c "print(round(0.05 * $n, 6))")"
        z="$(python3 -c "print(round(0.10 + 0.025 * $n, 6))")"
        scene=scenes/tet_cube_drop.toml
        sets=(--set "body[0].mesh.cells=[$n,$n,$n]" --set "body[0].mesh.size=[$side,$side,$side]"
            --set "body[0].translation=[0.0,0.0,$z]")
        peer_cmd=("$PEERS_DIR/bench_tetcube_newton.py" --solver vbd --tile 1 --cells "$n")
        ;;
    cloth*)
        n="${case#cloth}"
        scene=scenes/cloth_sphere_64.toml
        sets=(--set "body[0].mesh.cells=[$((n - 1)),$((n - 1)),1]")
        if ((n > 64)); then
            # The scene's rule for its collision distances (cloth_sphere_64.toml: D_max below
            # half the edge length, so a flat cloth has no pairs) at the finer mesh: D_min and
            # D_max scale with the edge length, 1/(N-1) m (4 and 8 mm at N = 64; at N = 128, 2
            # and 4 mm, the peer's 4 mm self-contact margin). Unscaled, every vertex of the flat
            # cloth at N = 128 is within D_max of its neighbours' edges (0.71 edge = 5.6 mm).
            dmin="$(python3 -c "print(round(0.004 * 63 / ($n - 1), 7))")"
            dmax="$(python3 -c "print(round(0.008 * 63 / ($n - 1), 7))")"
            sets+=(--set "collision.d_min=$dmin" --set "collision.d_max=$dmax")
        fi
        peer_cmd=("$PEERS_DIR/bench_cloth_newton.py" --solver vbd --n "$n")
        ;;
    *)
        log "unknown case '$case' (cubeN or clothN)"
        exit 2
        ;;
    esac
    log "$case: $SUPPLE bench scene $scene ${sets[*]} --frames $FRAMES --json"
    all_t="$(env -u LP_NUM_THREADS "$SUPPLE" bench scene "$scene" "${sets[@]}" --frames "$FRAMES" --json)" ||
        { log "$case: Supple failed"; exit 1; }
    one_t=""
    if [[ "${SKIP_ONE_THREAD:-0}" != 1 ]]; then
        log "$case: the same with LP_NUM_THREADS=1"
        one_t="$(LP_NUM_THREADS=1 "$SUPPLE" bench scene "$scene" "${sets[@]}" --frames "$FRAMES" --json)" ||
            { log "$case: Supple (1 thread) failed"; exit 1; }
    fi
    peer=""
    peer_error="$peer_ready"
    if [[ -z "$peer_error" ]]; then
        log "$case: peer $VENV/bin/python ${peer_cmd[*]} --frames $FRAMES"
        if out="$("$VENV/bin/python" "${peer_cmd[@]}" --frames "$FRAMES" --warmup 1)"; then
            peer="$(printf '%s\n' "$out" | tail -n 1)"
        else
            peer_error="the peer script failed (exit $?)"
        fi
    fi
    CASE="$case" ALL="$all_t" ONE="$one_t" PEER="$peer" PEER_ERROR="$peer_error" \
        CORES="$(nproc)" python3 - <<'PY'
import json, os

def load(name):
    text = os.environ.get(name, "").strip()
    return json.loads(text) if text else None

a, o, p = load("ALL"), load("ONE"), load("PEER")
ms = lambda r: r["ms_per_frame_median"] if r else None
elements = a["tets"] or None
out = {
    "case": os.environ["CASE"],
    "scene": a["scene"],
    "device": a["device"],
    "vertices": a["vertices"],
    "tets": a["tets"],
    "frames": a["frames"],
    "supple_threads_all": a.get("threads") or int(os.environ["CORES"]),
    "supple_ms_per_frame_all_threads": ms(a),
    "supple_ms_per_frame_1_thread": ms(o),
    "supple_ms_per_frame_per_tet_all_threads": ms(a) / elements if elements else None,
    "host_waits_per_frame": a["host_waits_per_frame"],
    "host_waits_per_frame_max": a.get("host_waits_per_frame_max"),
    "submits_per_frame": a["submits_per_frame"],
    "dispatches_per_frame": a["dispatches_per_frame"],
    "device_bytes": a["device_bytes"],
    "device_bytes_per_tet": a["device_bytes"] / elements if elements else None,
    "device_bytes_per_vertex": a["device_bytes"] / a["vertices"],
    "newton_iterations_mean": a["newton_iterations_mean"],
    "pcg_iterations_mean": a["pcg_iterations_mean"],
    "pcg_relative_residual_max": a["pcg_relative_residual_max"],
    "peer": "newton-vbd-cpu" if p else None,
    "peer_ms_per_frame": ms(p),
    "peer_error": os.environ.get("PEER_ERROR") or None,
    "ratio_peer_over_supple_all_threads": ms(p) / ms(a) if p else None,
    "ratio_peer_over_supple_1_thread": ms(p) / ms(o) if p and o else None,
}
print(json.dumps(out), flush=True)
PY
done
