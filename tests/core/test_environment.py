import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from cfannotate import environment


def test_env_bool_reads_words(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert environment.env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "off")
    assert environment.env_bool("X_FLAG", True) is False
    monkeypatch.delenv("X_FLAG")
    assert environment.env_bool("X_FLAG", True) is True


def test_env_bool_rejects_nonsense(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG must be one of"):
        environment.env_bool("X_FLAG", False)


def test_env_list_splits_and_trims(monkeypatch):
    monkeypatch.setenv("X_HOSTS", " a.example , b.example,, ")
    assert environment.env_list("X_HOSTS", []) == ["a.example", "b.example"]


def test_env_int_rejects_words(monkeypatch):
    monkeypatch.setenv("X_NUM", "ten")
    with pytest.raises(ImproperlyConfigured, match="whole number"):
        environment.env_int("X_NUM", 1)


def test_env_float_reads_finite_numbers_only(monkeypatch):
    assert environment.env_float("X_SECONDS", None) is None
    monkeypatch.setenv("X_SECONDS", " 2.5 ")
    assert environment.env_float("X_SECONDS", None) == 2.5
    for raw in ("soon", "inf", "NaN"):
        monkeypatch.setenv("X_SECONDS", raw)
        with pytest.raises(ImproperlyConfigured, match="X_SECONDS must be a number"):
            environment.env_float("X_SECONDS", 1.0)


def test_env_log_level_reads_level_names_in_any_case(monkeypatch):
    assert environment.env_log_level("X_LOG", "INFO") == "INFO"
    monkeypatch.setenv("X_LOG", " debug ")
    assert environment.env_log_level("X_LOG", "INFO") == "DEBUG"
    for raw in ("LOUD", "10", "warn"):
        monkeypatch.setenv("X_LOG", raw)
        with pytest.raises(ImproperlyConfigured, match="X_LOG must be one of DEBUG, INFO"):
            environment.env_log_level("X_LOG", "INFO")


@pytest.mark.parametrize(
    ("rate", "expected"),
    [
        ("600/minute", (600, 60)),
        ("10/15m", (10, 900)),
        (" 5 / 2 hours ", (5, 7200)),
        ("1/d", (1, 86400)),
    ],
)
def test_parse_rate_reads_counts_and_periods(rate, expected):
    assert environment.parse_rate(rate) == expected


def test_env_rate_rejects_nonsense_in_one_sentence(monkeypatch):
    monkeypatch.setenv("X_RATE", "10/15m")
    assert environment.env_rate("X_RATE", "1/s") == "10/15m"
    for bad in ["ten/minute", "10/fortnight", "0/m", "10/0m", "10"]:
        monkeypatch.setenv("X_RATE", bad)
        with pytest.raises(ImproperlyConfigured, match=r"X_RATE must be a rate such as 100/minute"):
            environment.env_rate("X_RATE", "1/s")


def test_secret_key_is_generated_once_and_kept(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("CFANNOTATE_SECRET_KEY", raising=False)
    first = environment.secret_key(production=False, state_dir=tmp_path)
    second = environment.secret_key(production=False, state_dir=tmp_path)
    assert first == second
    assert len(first) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_secret_key_required_in_production(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("CFANNOTATE_SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="CFANNOTATE_SECRET_KEY is not set"):
        environment.secret_key(production=True, state_dir=tmp_path)
    monkeypatch.setenv("CFANNOTATE_SECRET_KEY", "short")
    with pytest.raises(ImproperlyConfigured, match="at least 50"):
        environment.secret_key(production=True, state_dir=tmp_path)


def test_database_defaults_to_sqlite(tmp_path: Path):
    config = environment.database(url=None, sqlite_path=tmp_path / "db.sqlite3")
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(tmp_path / "db.sqlite3")


def test_sqlite_waits_for_a_writer_by_default_and_by_url(tmp_path: Path):
    """The demo's web server and db_worker share one SQLite file: both ways of naming it
    get WAL, IMMEDIATE transactions and a busy timeout, so neither fails "locked"."""
    default = environment.database(url=None, sqlite_path=tmp_path / "db.sqlite3")
    by_url = environment.database(url=f"sqlite:///{tmp_path}/demo.sqlite3", sqlite_path=tmp_path)
    for config in (default, by_url):
        assert config["ENGINE"] == "django.db.backends.sqlite3"
        assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
        assert config["OPTIONS"]["timeout"] == 20
        assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]
    assert by_url["NAME"] == f"{tmp_path}/demo.sqlite3"
    assert by_url["TEST"]["NAME"] == f"{tmp_path}/test-demo.sqlite3"
    memory = environment.database(url="sqlite://:memory:", sqlite_path=tmp_path)
    assert memory["OPTIONS"]["transaction_mode"] == "IMMEDIATE" and "TEST" not in memory


def test_database_url_selects_postgres(tmp_path: Path):
    config = environment.database(
        url="postgres://someone:secret@db.internal:5433/labels", sqlite_path=tmp_path / "x"
    )
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", 5433, "labels")
    assert config["OPTIONS"]["connect_timeout"] == 5


def test_database_url_with_unknown_scheme_is_refused(tmp_path: Path):
    with pytest.raises(ImproperlyConfigured, match="must start with postgres://"):
        environment.database(url="mysql://root@localhost/x", sqlite_path=tmp_path / "x")


def test_the_task_worker_says_only_what_went_wrong_by_default():
    """Two INFO lines per background task would bury the app's own log (every submitted
    assignment is assessed in a task). `db_worker` sets its loggers to INFO as it starts,
    so the handler drops them; a task that fails is still logged, at ERROR."""
    import logging

    from django_tasks_db.management.commands.db_worker import Command

    Command().configure_logging(verbosity=1)  # what `manage.py db_worker` does first
    (handler,) = [h for h in logging.getLogger().handlers if h.get_name() == "stderr"]

    def shown(name: str, level: int) -> bool:
        logger = logging.getLogger(name)
        record = logger.makeRecord(name, level, __file__, 1, "state=RUNNING", (), None)
        return logger.isEnabledFor(level) and bool(handler.filter(record))

    assert not shown("django_tasks", logging.INFO)
    assert shown("django_tasks", logging.ERROR)
    assert shown("django_tasks_db", logging.INFO)  # "Starting worker", once
    assert shown("cfannotate.candidates.services", logging.INFO)


@pytest.mark.parametrize("name", ["django.request", "django.utils.autoreload", "django.security"])
def test_a_django_line_reaches_one_handler_so_it_is_printed_once(name):
    """Django's own console handler (on under DEBUG, as in the demo) printed every
    django.* warning twice: "Not Found: /x" plain, then again with a time stamp."""
    import logging

    logger, reached = logging.getLogger(name), []
    while logger is not None:
        # pytest's own capture handlers sit on the root too; they print nothing.
        reached += [h for h in logger.handlers if not type(h).__module__.startswith("_pytest")]
        logger = logger.parent if logger.propagate else None

    assert [handler.get_name() for handler in reached] == ["stderr"]


def test_the_app_draws_no_model_loading_bars_in_its_log():
    """A web or task process loading a model drew transformers' "Loading weights" bar into
    the log; the app's settings turn those bars off before any model code is imported."""
    script = (
        "import django; django.setup(); "
        "from transformers.utils import logging; print(logging.is_progress_bar_enabled())"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    env["DJANGO_SETTINGS_MODULE"] = "cfannotate.settings"
    answer = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert answer.stdout.strip() == "False"
