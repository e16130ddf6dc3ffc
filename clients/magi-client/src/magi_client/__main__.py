"""`python -m magi_client` is the client's `magi` command."""

from magi_client.main import main

raise SystemExit(main())
