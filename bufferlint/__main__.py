"""`python -m bufferlint` is the same as the `bufferlint` command."""

from bufferlint.entry import main

raise SystemExit(main())
