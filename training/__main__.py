"""``python -m training``: the same as the ``training`` console script."""

import sys

from training.cli import main

sys.exit(main())
