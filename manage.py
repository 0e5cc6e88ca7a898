#!/usr/bin/env python
"""Django's command-line utility, with configuration errors told in one sentence."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    from cfannotate.core.startup import run_command_line

    run_command_line(sys.argv)


if __name__ == "__main__":
    main()
