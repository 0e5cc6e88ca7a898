"""The apps form a line: a module of an app imports only its own app and the apps below it.

`APP_ORDER` is the line drawn in docs/architecture.md. Every import counts, at the top
of a module or inside a function; only imports under `if TYPE_CHECKING:` (annotations,
never run) are left out. A higher app reacts to a lower one through the hooks the lower
app offers (signals and registries wired in `AppConfig.ready()`), never by being imported
from below.
"""

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "cfannotate"
# Lowest first. The demo sits on top of everything: it plays a whole campaign.
APP_ORDER = (
    "core",
    "campaigns",
    "candidates",
    "labeling",
    "crowd",
    "quality",
    "exports",
    "evaluation",
    "demo",
)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import in the source that runs, anywhere in the module."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend(
                (node.lineno, f"{node.module}.{alias.name}") for alias in node.names
            )  # `from cfannotate import labeling` names the app in the alias
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def app_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == PACKAGE else None


def upward_imports(package_dir: Path, order: tuple[str, ...]) -> list[str]:
    """Every import of a higher app by a lower one, as 'path:line: app -> module'."""
    rank = {app: index for index, app in enumerate(order)}
    problems = []
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir)
        if len(relative.parts) < 2 or relative.parts[0] not in rank:
            continue  # project modules (settings, urls) sit above every app
        app = relative.parts[0]
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            target = app_of(module)
            if target in rank and rank[target] > rank[app]:
                problems.append(f"{relative}:{line}: {app} -> {module}")
    return problems


def test_every_installed_app_has_a_place_in_the_line():
    installed = {
        name.split(".")[1] for name in settings.INSTALLED_APPS if name.startswith(f"{PACKAGE}.")
    }
    assert installed == set(APP_ORDER)


def test_no_app_imports_a_higher_app():
    problems = upward_imports(ROOT / PACKAGE, APP_ORDER)
    assert not problems, "Imports against the line in docs/architecture.md:\n" + "\n".join(problems)


def test_the_check_finds_an_upward_import_in_a_function(tmp_path):
    package = tmp_path / PACKAGE
    (package / "low").mkdir(parents=True)
    (package / "high").mkdir()
    (package / "high" / "views.py").write_text("from cfannotate.low.models import Thing\n")
    (package / "low" / "services.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from cfannotate.high.models import Typed  # annotations only: allowed\n"
        "def late():\n"
        "    from cfannotate.high import views\n"
    )
    assert upward_imports(package, ("low", "high")) == [
        "low/services.py:5: low -> cfannotate.high.views"
    ]
    assert upward_imports(package, ("high", "low")) == [
        "high/views.py:1: high -> cfannotate.low.models.Thing"
    ]
