"""``python -m hotstart train ...``: see hotstart/cli.py."""
import sys

from .cli import main

sys.exit(main())
