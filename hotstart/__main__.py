"""``python -m hotstart train ...``: see hotstart/cli/."""
import sys

from .cli import main

sys.exit(main())
