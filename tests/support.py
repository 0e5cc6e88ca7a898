"""Helpers for tests that run the project's commands in a fresh process."""

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_manage(*args: str, env: dict[str, str] | None = None, timeout: int = 120):
    """Run `manage.py` with a clean cfannotate environment plus `env`."""
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CFANNOTATE_")
        and key not in {"DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    base.update(env or {})
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "manage.py"), *args],
        capture_output=True,
        text=True,
        env=base,
        cwd=REPO_ROOT,
        timeout=timeout,
        check=False,
    )


def run_bench(script: str, *options: str, timeout: int = 300):
    """Run `bench/<script>` with `options` from the repository root."""
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / script), *options],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
