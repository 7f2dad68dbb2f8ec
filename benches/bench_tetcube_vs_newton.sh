#!/usr/bin/env bash
# Side-by-side peer benchmark of the tet cube drop (Scene B of $PEERS_DIR/README.md):
#   * Supple: `supple bench scene scenes/tet_cube_drop.toml --frames 62 --json`, once with every
#     lavapipe thread and once with LP_NUM_THREADS=1;
#   * the peer: NVIDIA's Newton engine (VBD, 10 substeps x 10 iterations, Warp's CPU device, one
#     core), `python3 $PEERS_DIR/bench_tetcube_newton.py --solver vbd --tile 1`, in a virtual
#     environment `.venv-peers` created here with pip (numpy warp-lang newton) when missing.
# Prints one JSON object on stdout combining the three figures (ms per frame, median); progress
# and errors go to stderr. When the peer cannot be installed (e.g. offline) or fails, it is
# skipped with a message and its fields are null ("peer_error" says why).
#
# Environment: PEERS_DIR (default ../shared/peers, relative to the repository root),
# PEERS_VENV (default .venv-peers), WARP_CACHE_PATH (Warp's kernel cache, default
# $PEERS_VENV/warp-cache, so nothing is written into PEERS_DIR), FRAMES (default 62),
# CARGO_TARGET_DIR (where the CLI is built, default target), SKIP_BUILD=1 (use the CLI already
# built), SKIP_PEER=1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PEERS_DIR="${PEERS_DIR:-../shared/peers}"
VENV="${PEERS_VENV:-.venv-peers}"
FRAMES="${FRAMES:-62}"
TARGET="${CARGO_TARGET_DIR:-target}"
SCENE=scenes/tet_cube_drop.toml
log() { echo "[bench_tetcube_vs_newton] $*" >&2; }

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    log "building the CLI (cargo build --release -p supple-tools)"
    cargo build --release -p supple-tools >&2
fi
SUPPLE="$TARGET/release/supple"
[[ -x "$SUPPLE" ]] || { log "no CLI at $SUPPLE"; exit 1; }

log "Supple, all lavapipe threads ($(nproc) cores): $SUPPLE bench scene $SCENE --frames $FRAMES --json"
supple_all="$(env -u LP_NUM_THREADS "$SUPPLE" bench scene "$SCENE" --frames "$FRAMES" --json)"
log "$supple_all"
log "Supple, LP_NUM_THREADS=1"
supple_one="$(LP_NUM_THREADS=1 "$SUPPLE" bench scene "$SCENE" --frames "$FRAMES" --json)"
log "$supple_one"

peer=""
peer_error=""
if [[ "${SKIP_PEER:-0}" == 1 ]]; then
    peer_error="skipped (SKIP_PEER=1)"
elif [[ ! -f "$PEERS_DIR/bench_tetcube_newton.py" ]]; then
    peer_error="peer script not found: $PEERS_DIR/bench_tetcube_newton.py (set PEERS_DIR)"
else
    if ! "$VENV/bin/python" -c "import numpy, warp, newton" 2>/dev/null; then
        log "installing the peer into $VENV (pip install numpy warp-lang newton)"
        if ! { [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV" >&2; } ||
            ! "$VENV/bin/pip" install --disable-pip-version-check --retries 1 --timeout 30 \
                numpy warp-lang newton >&2; then
            peer_error="could not install the peer with pip into $VENV (offline or no PyPI access?); peer skipped"
        fi
    fi
    if [[ -z "$peer_error" ]]; then
        log "peer: $VENV/bin/python $PEERS_DIR/bench_tetcube_newton.py --solver vbd --tile 1 (first run JIT-compiles Warp kernels for a few minutes; excluded from its timing)"
        WARP_CACHE_PATH="${WARP_CACHE_PATH:-$(cd "$VENV" && pwd)/warp-cache}"
        export WARP_CACHE_PATH
        if peer_out="$("$VENV/bin/python" "$PEERS_DIR/bench_tetcube_newton.py" --solver vbd --tile 1)"; then
            peer="$(printf '%s\n' "$peer_out" | tail -n 1)"
            log "$peer"
        else
            peer_error="the peer script failed (exit $?); see the messages above"
        fi
    fi
fi
[[ -n "$peer_error" ]] && log "$peer_error"

SUPPLE_ALL="$supple_all" SUPPLE_ONE="$supple_one" PEER="$peer" PEER_ERROR="$peer_error" \
    CORES="$(nproc)" python3 - <<'EOF'
import json, os

def load(name):
    text = os.environ.get(name, "").strip()
    return json.loads(text) if text else None

all_t, one_t, peer = load("SUPPLE_ALL"), load("SUPPLE_ONE"), load("PEER")
ms = lambda r: r["ms_per_frame_median"] if r else None
out = {
    "bench": "tet_cube_drop",
    "scene": all_t["scene"],
    "supple_device": all_t["device"],
    "supple_ms_per_frame_all_threads": ms(all_t),
    "supple_threads_all": all_t.get("threads") or int(os.environ["CORES"]),
    "supple_ms_per_frame_1_thread": ms(one_t),
    "supple_frames": all_t["frames"],
    "supple_newton_iterations_mean": all_t["newton_iterations_mean"],
    "supple_pcg_iterations_mean": all_t["pcg_iterations_mean"],
    "peer": "newton-vbd-cpu" if peer else None,
    "peer_ms_per_frame": ms(peer),
    "peer_version": peer.get("peer_version") if peer else None,
    "peer_error": os.environ.get("PEER_ERROR") or None,
    "ratio_peer_over_supple_all_threads": ms(peer) / ms(all_t) if peer else None,
    "ratio_peer_over_supple_1_thread": ms(peer) / ms(one_t) if peer else None,
    "supple_all_threads": all_t,
    "supple_1_thread": one_t,
    "peer_result": peer,
}
print(json.dumps(out))
EOF
