"""The API's rate limits: past them 429 in the API's error shape, with Retry-After."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from cfannotate.core.throttles import FailureLimit, retry_message
from cfannotate.core.worker_tokens import join_token
from tests.factories import make_labeling_campaign, make_user

pytestmark = pytest.mark.usefixtures("rate_limits")


def _assert_refused(response, *, reason: str):
    assert response.status_code == 429
    body = json.loads(response.content)  # the schema's own renderer writes it as JSON too
    assert set(body) == {"message", "fields"} and body["fields"] == {}
    assert body["message"].startswith(reason)
    wait = int(response["Retry-After"])
    assert 0 < wait <= 60
    assert f"try again in {wait} second" in body["message"]


def test_a_user_past_the_api_rate_gets_429_with_retry_after(api_client):
    for _ in range(5):
        assert api_client.get("/api/campaigns/").status_code == 200
    _assert_refused(api_client.get("/api/campaigns/"), reason="Too many requests")
    # Every operation draws on the same allowance, writes included.
    _assert_refused(
        api_client.post("/api/campaigns/create/", {}, format="json"), reason="Too many requests"
    )


def test_the_api_rate_is_counted_per_user(api_client):
    for _ in range(6):
        api_client.get("/api/campaigns/")
    someone_else = APIClient()
    someone_else.force_authenticate(make_user("carol"))
    assert someone_else.get("/api/campaigns/").status_code == 200


def test_anonymous_requests_are_limited_per_address(db):
    visitor = APIClient()
    for _ in range(3):
        assert visitor.get("/api/schema/?format=json").status_code == 200
    _assert_refused(visitor.get("/api/schema/?format=json"), reason="Too many requests")
    elsewhere = APIClient(REMOTE_ADDR="203.0.113.9")
    assert elsewhere.get("/api/schema/?format=json").status_code == 200


def test_the_worker_hot_path_reads_no_rate_limit(client, settings):
    """Worker pages are plain Django views: with every limit at one they still never answer
    429, and none of their queries touches the cache's table."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "1/minute", "anon": "1/minute"},
    }
    settings.LOGIN_FAILURE_RATE = settings.TOKEN_FAILURE_RATE = "1/15m"
    campaign = make_labeling_campaign(units=4, gold=0, training=0, rounds_per_assignment=2)
    join = reverse("join", kwargs={"token": join_token(campaign.id)})
    with CaptureQueriesContext(connection) as queries:
        statuses = []
        for worker in ("w1", "w2"):
            joined = client.post(f"{join}?worker={worker}")
            statuses.append(joined.status_code)
            page = client.get(joined["Location"], follow=True)
            statuses.extend(status for _, status in page.redirect_chain)
            statuses.append(page.status_code)
    assert 429 not in statuses and statuses.count(200) == 2
    assert not [query for query in queries if "cfannotate_cache" in query["sql"]]


def test_failure_limit_waits_for_the_oldest_failure_to_age_out():
    clock = iter([1000.0, 1010.0, 1020.0, 1030.0, 1900.0, 1901.0])
    # LOGIN_FAILURE_RATE is 3/15m here.
    limit = FailureLimit("example", "LOGIN_FAILURE_RATE", clock=lambda: next(clock))
    for _ in range(3):
        limit.record_failure("a")
    assert limit.wait_seconds("a", "b") == 1000 + 900 - 1030
    assert limit.wait_seconds("a") == 0  # at 1900 the first failure has aged out
    assert limit.wait_seconds("b") == 0


@pytest.mark.parametrize(
    ("wait", "expected"),
    [(1, "in 1 second."), (59, "in 59 seconds."), (600, "in 10 minutes."), (None, "later.")],
)
def test_retry_message_says_when(wait, expected):
    assert retry_message("Too many requests", wait) == f"Too many requests; try again {expected}"
