"""Bad configuration stops a command with one clear sentence, not a traceback."""

import secrets

from tests.support import run_manage


def _assert_one_clear_line(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_unreachable_database_is_one_sentence(tmp_path):
    # Port 1 on loopback refuses connections at once.
    result = run_manage(
        "migrate",
        "--no-input",
        env={
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "CFANNOTATE_STATE_DIR": str(tmp_path),
        },
    )
    _assert_one_clear_line(result, "cannot use the database", "127.0.0.1:1", "DATABASE_URL")


def test_unknown_database_scheme_is_one_sentence(tmp_path):
    result = run_manage(
        "check", env={"DATABASE_URL": "mysql://x@y/z", "CFANNOTATE_STATE_DIR": str(tmp_path)}
    )
    _assert_one_clear_line(result, "configuration error", "DATABASE_URL")


def test_unreadable_rate_limit_is_one_sentence(tmp_path):
    result = run_manage(
        "check",
        env={
            "CFANNOTATE_LOGIN_FAILURE_RATE": "ten a minute",
            "CFANNOTATE_STATE_DIR": str(tmp_path),
        },
    )
    _assert_one_clear_line(result, "CFANNOTATE_LOGIN_FAILURE_RATE must be a rate such as")


def test_production_without_secret_is_one_sentence(tmp_path):
    result = run_manage(
        "check",
        env={
            "CFANNOTATE_PRODUCTION": "1",
            "CFANNOTATE_ALLOWED_HOSTS": "labels.example.org",
            "CFANNOTATE_STATE_DIR": str(tmp_path),
        },
    )
    _assert_one_clear_line(result, "CFANNOTATE_SECRET_KEY is not set")


def test_production_without_hosts_is_one_sentence(tmp_path):
    result = run_manage(
        "check",
        env={
            "CFANNOTATE_PRODUCTION": "1",
            "CFANNOTATE_SECRET_KEY": secrets.token_urlsafe(64),
            "CFANNOTATE_STATE_DIR": str(tmp_path),
        },
    )
    _assert_one_clear_line(result, "CFANNOTATE_ALLOWED_HOSTS is not set")


def test_deploy_check_is_clean_under_production_settings(tmp_path):
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={
            "CFANNOTATE_PRODUCTION": "1",
            "CFANNOTATE_SECRET_KEY": secrets.token_urlsafe(64),
            "CFANNOTATE_ALLOWED_HOSTS": "labels.example.org",
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "CFANNOTATE_STATE_DIR": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_deploy_check_warns_in_development_mode(tmp_path):
    result = run_manage("check", "--deploy", env={"CFANNOTATE_STATE_DIR": str(tmp_path)})
    assert "cfannotate.W001" in result.stdout + result.stderr
