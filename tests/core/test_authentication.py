"""Bad API tokens are counted per address; past the limit even a right token waits."""

import pytest
from rest_framework.test import APIClient

from cfannotate.core.api_tokens import api_token_rotate

pytestmark = pytest.mark.usefixtures("rate_limits")


def _client(key: str, address: str = "198.51.100.7") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_guessing_tokens_is_refused_after_the_limit(researcher):
    good = api_token_rotate(user=researcher)
    for guess in range(3):
        response = _client(f"guess{guess}").get("/api/campaigns/")
        assert response.status_code == 401
        assert response.json()["message"] == "Invalid token."
    refused = _client("guess3").get("/api/campaigns/")
    assert refused.status_code == 429
    body = refused.json()
    assert body["fields"] == {}
    assert body["message"].startswith("Too many bad API tokens from this address; try again in")
    assert 0 < int(refused["Retry-After"]) <= 15 * 60
    # The key is not even looked up: a right guess from that address is refused too.
    assert _client(good.key).get("/api/campaigns/").status_code == 429


def test_bad_token_headers_count_as_failures(db):
    for header in ["Token", "Token two words", "Token nope"]:
        client = APIClient(REMOTE_ADDR="198.51.100.7")
        client.credentials(HTTP_AUTHORIZATION=header)
        assert client.get("/api/campaigns/").status_code == 401
    assert _client("another").get("/api/campaigns/").status_code == 429


def test_other_addresses_and_good_tokens_are_unaffected(researcher):
    good = api_token_rotate(user=researcher)
    for guess in range(4):
        _client(f"guess{guess}").get("/api/campaigns/")
    assert _client(good.key, address="192.0.2.44").get("/api/campaigns/").status_code == 200
    # Good tokens are not failures: they never add to the count.
    for _ in range(4):
        assert _client(good.key, address="192.0.2.45").get("/api/campaigns/").status_code == 200


def test_requests_without_a_token_are_not_counted(db):
    for _ in range(5):
        response = APIClient(REMOTE_ADDR="198.51.100.7").get("/api/campaigns/")
        assert response.status_code == 401
    assert _client("first-guess").get("/api/campaigns/").status_code == 401
