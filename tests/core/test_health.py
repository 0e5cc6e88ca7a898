"""The load balancer's probe: /healthz answers plain HTTP and any Host with 200."""

import secrets

import pytest

from tests.support import run_manage


@pytest.fixture
def https_only(settings):
    settings.SECURE_SSL_REDIRECT = True  # as in production; SECURE_REDIRECT_EXEMPT as set


def test_plain_http_probe_gets_200_while_everything_else_is_redirected(client, db, https_only):
    assert client.get("/healthz").status_code == 200
    assert client.get("/healthz").json() == {"status": "ok"}
    for path in ["/", "/healthz/", "/healthzz", "/api/healthz", "/accounts/login/?x=healthz"]:
        response = client.get(path)
        assert response.status_code == 301, path
        assert response["Location"].startswith("https://testserver/"), path


def test_probe_by_the_instance_address_gets_200_other_pages_400(client, db, https_only):
    assert client.get("/healthz", HTTP_HOST="10.0.3.7").status_code == 200
    assert client.get("/healthz", HTTP_HOST="10.0.3.7", secure=True).status_code == 200
    assert client.get("/", HTTP_HOST="10.0.3.7", secure=True).status_code == 400


def test_production_settings_answer_the_plain_http_probe(tmp_path):
    probe = (
        "from django.test import Client\n"
        "c = Client()\n"
        "print(c.get('/healthz', HTTP_HOST='10.0.3.7').status_code,"
        " c.get('/healthz', HTTP_HOST='labels.example.org').status_code,"
        " c.get('/', HTTP_HOST='labels.example.org').status_code,"
        " c.get('/healthz/', HTTP_HOST='labels.example.org').status_code)\n"
    )
    result = run_manage(
        "shell",
        "--verbosity=0",
        "-c",
        probe,
        env={
            "CFANNOTATE_PRODUCTION": "1",
            "CFANNOTATE_SECRET_KEY": secrets.token_urlsafe(64),
            "CFANNOTATE_ALLOWED_HOSTS": "labels.example.org",
            "CFANNOTATE_STATE_DIR": str(tmp_path),
            "CFANNOTATE_LOG_LEVEL": "CRITICAL",
        },
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "200", "301", "301"]
