"""`python -m judgements.cli` is the `magi` console script."""

from judgements.cli.main import main

raise SystemExit(main())
