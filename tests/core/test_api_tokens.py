"""A researcher creates, rotates and revokes an API token; scripts use it on the API."""

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_campaign


def _api(key: str | None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_token_page_needs_login(client):
    response = client.get("/accounts/api-token/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_create_use_rotate_and_revoke_a_token(client, researcher, other_researcher):
    make_campaign(owner=researcher, name="Mine")
    make_campaign(owner=other_researcher, name="Theirs")
    client.force_login(researcher)
    assert "You have no API token." in client.get("/accounts/api-token/").content.decode()

    client.post("/accounts/api-token/", {"action": "rotate"})
    first = Token.objects.get(user=researcher).key
    assert first in client.get("/accounts/api-token/").content.decode()
    listed = _api(first).get("/api/campaigns/").json()["results"]
    assert [campaign["name"] for campaign in listed] == ["Mine"]

    client.post("/accounts/api-token/", {"action": "rotate"})
    second = Token.objects.get(user=researcher).key
    assert second != first
    assert _api(first).get("/api/campaigns/").status_code == 401
    assert _api(second).get("/api/campaigns/").status_code == 200

    client.post("/accounts/api-token/", {"action": "revoke"})
    assert not Token.objects.filter(user=researcher).exists()
    assert _api(second).get("/api/campaigns/").status_code == 401


def test_an_unknown_action_is_refused_and_changes_nothing(client, researcher):
    client.force_login(researcher)
    response = client.post("/accounts/api-token/", {"action": "steal"})
    assert response.status_code == 400
    assert "Unknown action." in response.content.decode()
    assert not Token.objects.exists()


def test_the_token_page_is_csrf_protected(researcher):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post("/accounts/api-token/", {"action": "rotate"}).status_code == 403
    assert not Token.objects.exists()
