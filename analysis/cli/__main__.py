"""``python -m analysis.cli``: the ``swppp`` command."""

import sys

from . import main

sys.exit(main())
