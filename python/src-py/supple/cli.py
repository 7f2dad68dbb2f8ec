"""The ``supple`` command installed by ``pip install ./python``: the same Rust code as the
``supple`` binary (``supple_tools::cli_main``)."""

from __future__ import annotations

import os
import sys

from . import _supple


def main(argv: list[str] | None = None) -> int:
    """Runs ``supple ARGS…`` and returns (as a script: exits with) its status."""
    args = sys.argv[1:] if argv is None else argv
    # `supple sweep` starts one `supple run` process per entry: through this interpreter.
    os.environ.setdefault("SUPPLE_SELF_PYTHON", sys.executable)
    return int(_supple.cli_main(list(args)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
