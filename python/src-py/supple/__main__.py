"""``python -m supple ARGS…`` runs the ``supple`` command line."""

import sys

from .cli import main

sys.exit(main())
