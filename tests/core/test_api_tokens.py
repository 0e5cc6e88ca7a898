"""A researcher creates, rotates and revokes an API token; scripts use it on the API.

Only the key's SHA-256 is stored; the key is on the page once, in the answer that made it.
"""

import hashlib
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from cfannotate.core.api_tokens import api_token_rotate
from cfannotate.core.models import ApiToken
from tests.factories import make_campaign, make_user


def _api(key: str | None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _key_on(page) -> str:
    html = page.content.decode()
    marker = 'id="api-token-key" class="link-field" type="text" readonly value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def test_the_token_page_needs_login(client):
    response = client.get("/accounts/api-token/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_create_use_rotate_and_revoke_a_token(client, researcher, other_researcher):
    make_campaign(owner=researcher, name="Mine")
    make_campaign(owner=other_researcher, name="Theirs")
    client.force_login(researcher)
    assert "You have no API token." in client.get("/accounts/api-token/").content.decode()

    made = client.post("/accounts/api-token/", {"action": "rotate"})
    assert made.status_code == 200
    first = _key_on(made)
    assert "shown only this once" in made.content.decode()
    listed = _api(first).get("/api/campaigns/").json()["results"]
    assert [campaign["name"] for campaign in listed] == ["Mine"]

    second = _key_on(client.post("/accounts/api-token/", {"action": "rotate"}))
    assert second != first
    assert _api(first).get("/api/campaigns/").status_code == 401
    assert _api(second).get("/api/campaigns/").status_code == 200

    client.post("/accounts/api-token/", {"action": "revoke"})
    assert not ApiToken.objects.filter(user=researcher).exists()
    assert _api(second).get("/api/campaigns/").status_code == 401


def test_a_key_is_shown_once_and_stored_only_as_its_digest(client, researcher):
    client.force_login(researcher)
    key = _key_on(client.post("/accounts/api-token/", {"action": "rotate"}))
    assert len(key) == 40

    token = ApiToken.objects.get(user=researcher)
    assert token.key_digest == hashlib.sha256(key.encode()).hexdigest()
    assert key not in [str(value) for value in ApiToken.objects.values().get().values()]

    later = client.get("/accounts/api-token/").content.decode()
    assert key not in later
    assert f"ending in\n    <code>…{key[-4:]}</code>" in later
    assert "Rotate token" in later and "Revoke" in later


def test_the_token_page_is_never_cached(client, researcher):
    client.force_login(researcher)
    made = client.post("/accounts/api-token/", {"action": "rotate"})
    shown = client.get("/accounts/api-token/")
    refused = client.post("/accounts/api-token/", {"action": "steal"})
    for response in (made, shown, refused):
        assert "no-store" in response["Cache-Control"]


def test_bad_and_foreign_keys_are_refused(researcher):
    key = api_token_rotate(user=researcher).key
    digest = ApiToken.objects.get().key_digest
    for presented in (digest, key.upper(), key[:-1], "not-a-real-token", key + "0"):
        response = _api(presented).get("/api/campaigns/")
        assert response.status_code == 401, presented
        assert response.json() == {"message": "Invalid token.", "fields": {}}
        assert response["WWW-Authenticate"] == "Token"
    assert _api(key).get("/api/campaigns/").status_code == 200


def test_an_inactive_researchers_token_stops_working(researcher):
    key = api_token_rotate(user=researcher).key
    researcher.is_active = False
    researcher.save()
    response = _api(key).get("/api/campaigns/")
    assert response.status_code == 401
    assert response.json()["message"] == "User inactive or deleted."


def test_the_database_refuses_a_plain_key(researcher):
    with pytest.raises(IntegrityError):
        ApiToken.objects.create(user=researcher, key_digest="a" * 40, key_ending="aaaa")


def test_an_unknown_action_is_refused_and_changes_nothing(client, researcher):
    client.force_login(researcher)
    response = client.post("/accounts/api-token/", {"action": "steal"})
    assert response.status_code == 400
    assert "Unknown action." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_token_page_is_csrf_protected(researcher):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post("/accounts/api-token/", {"action": "rotate"}).status_code == 403
    assert not ApiToken.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_migration_hashes_earlier_plain_keys_and_they_keep_working():
    """Tokens made before digests: scripts keep their keys, the database loses them."""
    before = [("core", "0002_api_token"), ("authtoken", "0004_alter_tokenproxy_options")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_apps = executor.loader.project_state(before).apps
    user = make_user("carol")
    made = timezone.now() - timedelta(days=30)
    plain = "0123456789abcdef0123456789abcdef01234567"
    old_apps.get_model("authtoken", "Token").objects.create(key=plain, user_id=user.id)
    old_apps.get_model("authtoken", "Token").objects.filter(key=plain).update(created=made)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    token = ApiToken.objects.get(user=user)
    assert (token.key_ending, token.created_at) == ("4567", made)
    assert token.key_digest == hashlib.sha256(plain.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone() == (0,)
    assert _api(plain).get("/api/campaigns/").status_code == 200
