"""Reads the deployment's configuration from environment variables, with clear errors.

Settings import this module; it must not import Django models or apps.
"""

import math
import os
import re
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no or on/off, not {raw!r}."
    )


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None


def env_float(name: str, default: float | None) -> float | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}.")
    return value


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def env_log_level(name: str, default: str) -> str:
    """A logging level by name, any case; a typo stops the start with one sentence rather
    than with the logging module's "Unable to configure root logger"."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    level = raw.strip().upper()
    if level not in LOG_LEVELS:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(LOG_LEVELS)}, not {raw!r}.")
    return level


RATE_UNITS = {
    **dict.fromkeys(["s", "sec", "second", "seconds"], 1),
    **dict.fromkeys(["m", "min", "minute", "minutes"], 60),
    **dict.fromkeys(["h", "hour", "hours"], 3600),
    **dict.fromkeys(["d", "day", "days"], 86400),
}
RATE_PATTERN = re.compile(r"(?P<count>\d+)/(?P<multiple>\d*)(?P<unit>[a-z]+)")
RATE_FORMAT = "a rate such as 100/minute or 10/15m (a count, a slash, then s, m, h or d)"


def parse_rate(rate: str) -> tuple[int, int]:
    """A rate such as `100/minute`, `600/h` or `10/15m`: (count, period in seconds).

    DRF's own format plus a multiple of the unit, so "10 per 15 minutes" can be written.
    """
    match = RATE_PATTERN.fullmatch(rate.strip().lower().replace(" ", ""))
    if match and match["unit"] in RATE_UNITS:
        count, multiple = int(match["count"]), int(match["multiple"] or 1)
        if count >= 1 and multiple >= 1:
            return count, multiple * RATE_UNITS[match["unit"]]
    raise ValueError(f"{rate!r} is not {RATE_FORMAT}")


def env_rate(name: str, default: str) -> str:
    """A rate (see `parse_rate`), checked here so a typo stops the start with one sentence."""
    raw = os.environ.get(name)
    rate = default if raw is None or raw.strip() == "" else raw.strip()
    try:
        parse_rate(rate)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {RATE_FORMAT}, not {raw!r}.") from None
    return rate


def secret_key(*, production: bool, state_dir: Path) -> str:
    """The secret key: required from the environment in production.

    For a development or demo install a random key is generated once and kept in
    the state directory, so signed worker tokens survive restarts without anyone
    shipping a well-known key.
    """
    key = os.environ.get("CFANNOTATE_SECRET_KEY", "").strip()
    if key:
        if production and len(key) < 50:
            raise ImproperlyConfigured(
                "CFANNOTATE_SECRET_KEY must be at least 50 characters in production."
            )
        return key
    if production:
        raise ImproperlyConfigured(
            "CFANNOTATE_SECRET_KEY is not set; production mode (CFANNOTATE_PRODUCTION=1) "
            "needs a long random secret, e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`."
        )
    key_file = state_dir / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    state_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(64)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


# What every SQLite database gets, the default one and one named by a sqlite:// URL: WAL
# lets the web server and db_worker processes read while one writes; IMMEDIATE takes the
# write lock when a transaction starts, so two writers queue on the busy timeout instead
# of one failing with "database is locked" when it upgrades a read lock.
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def database(*, url: str | None, sqlite_path: Path) -> dict:
    """The default database: SQLite in the state directory, or DATABASE_URL."""
    import dj_database_url

    if not url:
        return _sqlite({"ENGINE": "django.db.backends.sqlite3", "NAME": str(sqlite_path)})
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in {"postgres", "postgresql", "pgsql", "sqlite"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL must start with postgres:// or sqlite://, not {scheme or url!r}."
        )
    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except ValueError as error:
        raise ImproperlyConfigured(f"DATABASE_URL could not be read: {error}.") from None
    if config["ENGINE"] == "django.db.backends.postgresql":
        config.setdefault("OPTIONS", {})["connect_timeout"] = 5
    elif config["ENGINE"] == "django.db.backends.sqlite3":
        config = _sqlite(config)
    return config


def _sqlite(config: dict) -> dict:
    """SQLITE_OPTIONS (a URL's own options win), and a test database in a file beside it:
    an in-memory database shared between the live server's threads locks whole tables and
    ignores the busy timeout."""
    config = {**config, "OPTIONS": {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}}
    name = str(config["NAME"])
    if name and name != ":memory:" and not name.startswith("file:"):
        path = Path(name)
        config.setdefault("TEST", {}).setdefault("NAME", str(path.with_name("test-" + path.name)))
    return config
