"""``python3 -m amq``: the amq command (amq.cli)."""

import sys

from .cli import main

sys.exit(main())
