#!/usr/bin/env bash
# Supple's one entry point for a fresh Debian 12 / Ubuntu 22.04+ machine (as root, or a user
# with sudo): installs whatever is missing, then
#   scripts/dev.sh run   -> builds the CLI and runs the main job: the default simulation scene
#   scripts/dev.sh test  -> runs the whole test suite on lavapipe with the validation layer on
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_pkgs=()
for p in mesa-vulkan-drivers libvulkan1 libvulkan-dev vulkan-validationlayers vulkan-tools \
         libshaderc-dev glslang-dev spirv-tools gcc g++ pkg-config curl ca-certificates python3 \
         python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "[setup] installing: ${need_pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi
# Debian's static shaderc/glslang (see .cargo/config.toml); other multiarch paths by arch.
if [ -z "${SHADERC_LIB_DIR:-}" ]; then
  export SHADERC_LIB_DIR="/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
fi
# No GPU? Vulkan falls back to lavapipe (the CPU driver) automatically.

case "${1:-run}" in
  run)
    cargo build --release -p supple-tools
    ./target/release/supple devices
    ./target/release/supple run --out out --export obj
    echo "[run] frames in out/frames/, statistics in out/report.json"
    ;;
  test)
    # The viewer's browser check runs headless Chromium (Debian's package).
    test_pkgs=()
    for p in chromium python3-venv; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || test_pkgs+=("$p")
    done
    if [ ${#test_pkgs[@]} -gt 0 ]; then
      echo "[setup] installing: ${test_pkgs[*]}"
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${test_pkgs[@]}"
    fi
    # Python packages the tests use, in one virtual environment (target/py-venv): Pixar's USD
    # (usd-core) checks the USD exports, Ray runs the sweep example on a local cluster, maturin
    # builds the Python bindings (python/), pytest + numpy + mypy test them. The tests fail (not
    # skip) when one is missing.
    venv=target/py-venv
    if ! "$venv/bin/python" -c "import pxr, ray, maturin, pytest, numpy, mypy" 2>/dev/null; then
      echo "[setup] installing usd-core, ray, maturin, pytest, numpy and mypy into $venv"
      [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
      "$venv/bin/python" -m pip install -q --upgrade pip
      "$venv/bin/python" -m pip install -q usd-core "ray>=2.9" "maturin>=1.16,<2" "pytest>=8" \
        numpy mypy
    fi
    export SUPPLE_PYTHON="$PWD/$venv/bin/python"
    export SUPPLE_REQUIRE_USD=1
    export SUPPLE_VALIDATION=1 SUPPLE_SYNC_VALIDATION=1 SUPPLE_PIPELINE_CACHE=off
    status=0
    # The Python bindings (not a workspace member: built by maturin only), into the test venv,
    # first: the guide's Python blocks run in the Rust suite (tests/cli/guide_code.rs), which
    # fails when they cannot (SUPPLE_REQUIRE_PYTHON).
    rm -rf target/wheels/test
    "$venv/bin/maturin" build --release -m python/Cargo.toml --target-dir target \
      --out target/wheels/test -i "$venv/bin/python" --quiet
    "$venv/bin/python" -m pip install -q --force-reinstall --no-deps target/wheels/test/supple-*.whl
    export SUPPLE_REQUIRE_PYTHON=1
    cargo test --workspace --release --no-fail-fast -- --test-threads 2 || status=1
    py_status=0
    "$venv/bin/python" -m pytest -q python/tests || py_status=$?
    if [ "$py_status" -eq 5 ]; then
      echo "[test] pytest collected no tests: failing" >&2
    fi
    [ "$py_status" -eq 0 ] || status=1
    exit "$status"
    ;;
  *)
    echo "usage: scripts/dev.sh run|test" >&2
    exit 2
    ;;
esac
