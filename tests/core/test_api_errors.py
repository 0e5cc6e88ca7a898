"""Every API error is `{"message", "fields"}` with a 4xx."""

import pytest
from rest_framework.test import APIClient


def test_unauthenticated_api_is_403_with_message(db):
    response = APIClient().get("/api/campaigns/")
    assert response.status_code in (401, 403)
    assert set(response.json()) == {"message", "fields"}
    assert "credentials" in response.json()["message"].lower()


def test_unknown_campaign_is_404_with_message(api_client):
    response = api_client.get("/api/campaigns/999999/")
    assert response.status_code == 404
    assert response.json() == {"message": "No campaign 999999 among yours.", "fields": {}}


@pytest.mark.parametrize("payload", [{}, {"name": "", "task_type": "sentiment"}])
def test_field_errors_are_listed(api_client, payload):
    response = api_client.post("/api/campaigns/create/", payload, format="json")
    assert response.status_code == 400
    body = response.json()
    assert "name" in body["fields"]
    assert body["message"].startswith("Some fields are invalid")


def test_malformed_json_is_400(api_client):
    response = api_client.post(
        "/api/campaigns/create/", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["message"]


def test_token_authentication_works(researcher):
    from cfannotate.core.api_tokens import api_token_rotate

    key = api_token_rotate(user=researcher).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/campaigns/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/campaigns/").status_code in (401, 403)


@pytest.mark.parametrize("path", ["/api/nonexistent/", "/api/campaigns/abc/", "/api/x/y/z"])
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_an_unknown_api_path_is_the_json_404_with_debug_on(api_client, settings, path, method):
    settings.DEBUG = True  # Django's own 404 page is HTML then, whatever handler404 says
    response = getattr(api_client, method)(path)
    assert response.status_code == 404
    assert response.json() == {
        "message": "Not found: no API operation has this path.",
        "fields": {},
    }


def test_an_api_path_without_its_final_slash_is_redirected_or_named(api_client, settings):
    settings.DEBUG = True
    response = api_client.get("/api/campaigns")
    assert response.status_code == 301 and response["Location"] == "/api/campaigns/"
    posted = api_client.post("/api/campaigns/create", {"name": "x"}, format="json")
    assert posted.status_code == 404
    assert posted.json()["message"].endswith("Did you mean /api/campaigns/create/ (with a slash)?")


def test_other_unknown_paths_keep_djangos_page(client, db, settings):
    settings.DEBUG = True
    response = client.get("/nonexistent/")
    assert response.status_code == 404 and "text/html" in response["Content-Type"]
