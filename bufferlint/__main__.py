"""`python -m bufferlint` is the same as the `bufferlint` command."""

from bufferlint.cli import main

raise SystemExit(main())
