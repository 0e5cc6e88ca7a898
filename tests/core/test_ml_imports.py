"""Web processes import the ML library in one thread before serving (core.ml_imports)."""

import ast
import subprocess
import sys
from pathlib import Path

from cfannotate.core.ml_imports import LAZY_MODULES

ROOT = Path(__file__).resolve().parents[2]


def _imported_inside_functions() -> set[str]:
    """Every `generation` module a function of the app imports."""
    found = set()
    for path in (ROOT / "cfannotate").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "generation"
                ):
                    found.add(node.module)
                elif isinstance(node, ast.Import):
                    found |= {a.name for a in node.names if a.name.startswith("generation")}
    return found


def test_every_module_the_app_imports_late_is_loaded_before_serving():
    """A `generation` module imported inside a function and missing from the list would be
    imported by a request thread first, which can race another thread's import."""
    missing = _imported_inside_functions() - set(LAZY_MODULES) - {"generation.generators"}
    assert not missing, f"add to cfannotate.core.ml_imports.LAZY_MODULES: {sorted(missing)}"


def test_the_web_entry_point_has_the_ml_library_imported_before_it_serves():
    script = (
        "import sys; import cfannotate.wsgi; "
        "print(all(name in sys.modules for name in "
        "('spacy', 'torch', 'transformers', 'sklearn', 'generation.relationship', "
        "'generation.generators.polyjuice_generator')))"
    )
    answer = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert answer.stdout.strip() == "True", answer.stderr
