"""`python -m generation ...`: see generation.cli."""

from generation.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
