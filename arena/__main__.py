"""``python -m arena`` is the ``arena`` command."""

from .cli import main

raise SystemExit(main())
