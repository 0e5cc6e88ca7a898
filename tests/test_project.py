"""Project-wide guarantees: migrations match the models; `generation` stays free of Django."""

import subprocess
import sys

from tests.support import REPO_ROOT, run_manage


def test_no_missing_migrations(tmp_path):
    result = run_manage(
        "makemigrations", "--check", "--dry-run", env={"CFANNOTATE_STATE_DIR": str(tmp_path)}
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_generation_never_imports_django():
    code = (
        "import importlib, pkgutil, sys\n"
        "import generation\n"
        "for module in pkgutil.walk_packages(generation.__path__, 'generation.'):\n"
        "    importlib.import_module(module.name)\n"
        "leaks = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(','.join(leaks))\n"
        "sys.exit(1 if leaks else 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=False
    )
    assert result.returncode == 0, f"generation imported Django: {result.stdout}{result.stderr}"


def test_template_comments_close_on_their_line():
    # Django's {# ... #} is one line only: a second line shows the comment on the page.
    root = REPO_ROOT / "templates"
    unclosed = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.count("{#") != line.count("#}")
    ]
    assert unclosed == [], "use {% comment %} for comments over several lines"
