"""``python -m composer``: the same command line as ``composer``."""

from composer.cli import main

raise SystemExit(main())
