"""Looking at results: the self-contained HTML viewer (``supple view``) from Python."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from . import _supple


def write_html(
    sim_or_dir: "_supple.Simulation | str | os.PathLike[str]",
    path: "str | os.PathLike[str] | None" = None,
    *,
    every: int = 1,
    quantize: bool = False,
) -> Path:
    """Writes one self-contained HTML page (WebGL2, no network) and returns its path.

    ``sim_or_dir`` is a run folder (``supple run --out DIR``: frames/ and report.json; the page
    plays every ``every``-th frame, default path ``DIR/view.html``) or a live ``Simulation``
    (the page shows its current state as one frame; ``path`` is then required). ``quantize``
    stores positions as 16-bit integers per frame.
    """
    if isinstance(sim_or_dir, _supple.Simulation):
        if path is None:
            raise ValueError("path: required when writing the page of a Simulation")
        out = Path(path)
        with tempfile.TemporaryDirectory(prefix="supple-view-") as tmp:
            frames = Path(tmp) / "frames"
            frames.mkdir()
            sim_or_dir.write(frames / "frame_0000.obj")
            _supple.write_html_dir(tmp, out, every=1, quantize=quantize)
        return out
    run_dir = Path(sim_or_dir)
    out = Path(path) if path is not None else run_dir / "view.html"
    _supple.write_html_dir(run_dir, out, every=every, quantize=quantize)
    return out
