"""Every operation of the OpenAPI schema, fuzzed in-process with schemathesis.

The schema is read from the app itself (`/api/schema/`), so operations added later
are fuzzed without touching this file. A researcher who owns a campaign with
originals, candidates, labeling units, judgments, quality decisions and a generation
run sends each request with token auth; path ids are drawn from that campaign's
rows, another researcher's rows and schemathesis' own values. Checks: no 5xx, the
status code and content type are documented, bodies match the schema, and every 4xx
is JSON with a `message`.
"""

import pytest
import schemathesis
from django.apps import apps
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import GenerationRun
from cfannotate.core.api_tokens import api_token_rotate
from cfannotate.quality.services import quality_refresh
from tests.factories import make_campaign, make_candidate, make_labeling_campaign, make_original
from tests.quality.conftest import work

MAX_EXAMPLES = 25  # per operation: ~30 operations in about a minute on SQLite

CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 20261122,
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
    }
)
schema = schemathesis.openapi.from_wsgi(
    "/api/schema/?format=json", get_wsgi_application(), config=CONFIG
)

# Path ids aimed at real rows: the campaign, and rows of these models in it. Ids of other
# models (operations added later) keep schemathesis' values, which mostly find nothing.
ID_SOURCES = {
    "run_id": "candidates.GenerationRun",
    "decision_id": "quality.WorkerDecision",
    "candidate_id": "candidates.Candidate",
    "gold_round_id": "labeling.GoldRound",
    "evaluation_id": "evaluation.Evaluation",
    "assignment_id": "labeling.Assignment",
}


def _ids_in(campaign) -> dict[str, int]:
    ids = {"campaign_id": campaign.id}
    for name, model_name in ID_SOURCES.items():
        try:
            model = apps.get_model(model_name)
        except LookupError:
            continue
        found = model.objects.filter(campaign=campaign).values_list("pk", flat=True).first()
        if found is not None:
            ids[name] = found
    return ids


@schemathesis.check
def error_has_message(ctx, response, case) -> None:
    """A refused request says why: a JSON object with a non-empty `message` string."""
    if not 400 <= response.status_code < 500:
        return
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(
            f"{response.status_code} without a JSON body: {response.text[:200]!r}"
        ) from None
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        raise AssertionError(f"{response.status_code} without a message: {body!r}"[:300])
    if not body["message"].strip():
        raise AssertionError(f"{response.status_code} with an empty message")


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    error_has_message,
]


@pytest.fixture
def in_process_requests():
    """Keep the test's database connection open across requests, as Django's test client does.

    The WSGI handler closes connections when a response finishes; the test's
    transaction (and on SQLite its in-memory database) would go with it.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_world(in_process_requests, researcher, other_researcher):
    """The researcher's campaign with rows of every kind, a token, and someone else's ids."""
    campaign = make_labeling_campaign(
        units=6, gold=2, training=1, rounds_per_assignment=3, gold_rounds_per_assignment=1
    )
    Campaign.objects.filter(pk=campaign.pk).update(owner=researcher)
    work(campaign, gold_right=6)
    work(campaign, gold_right=0, seconds=3)
    quality_refresh(campaign=campaign)
    GenerationRun.objects.create(campaign=campaign, chunk_size=10)
    theirs = make_campaign(owner=other_researcher)
    make_candidate(make_original(theirs))
    GenerationRun.objects.create(campaign=theirs, chunk_size=10)
    own = _ids_in(campaign)
    assert {"run_id", "decision_id", "candidate_id", "gold_round_id"} <= own.keys()
    key = api_token_rotate(user=researcher).key
    return {
        "headers": {"Authorization": f"Token {key}"},
        "own": own,
        # Someone else's campaign; where it has no such row, ours (a mismatched pair).
        "other": {**own, **_ids_in(theirs)},
    }


def _aim_ids(case, world, target: str) -> None:
    """Point the case's ids at rows that exist (ours or someone else's), or keep them."""
    if target == "generated" or not isinstance(case.path_parameters, dict):
        return
    for name, value in world[target].items():
        if name in case.path_parameters:
            case.path_parameters[name] = value


# One test per operation, named by it ("GET /api/campaigns/"): pytest-xdist sends tests to
# its processes by id, and schemathesis' own parametrize gives all of them the same one.
OPERATIONS = sorted(result.ok().label for result in schema.get_all_operations())
TARGETS = st.sampled_from(["own", "own", "other", "generated"])


@pytest.mark.parametrize("label", OPERATIONS)
def test_every_operation_answers_bad_input_cleanly(label, fuzz_world):
    operation = schema.find_operation_by_label(label)
    cases = st.one_of([operation.as_strategy(generation_mode=mode) for mode in GenerationMode])

    @given(case=cases, target=TARGETS)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case, target):
        _aim_ids(case, fuzz_world, target)
        case.call_and_validate(headers=fuzz_world["headers"], checks=CHECKS)

    fuzz()


def test_the_fuzzing_covers_every_operation():
    assert len(OPERATIONS) == len(set(OPERATIONS)) > 20
    assert "GET /api/campaigns/" in OPERATIONS


# --- Regressions: what the fuzzing found ---------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/api/campaigns/abc/", "/api/campaigns/-1/originals/", "/api/nothing/"]
)
def test_a_path_no_operation_matches_is_a_json_404(api_client, path):
    # Django's HTML 404 page answered paths whose ids are not numbers.
    response = api_client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "message": "Not found: no API operation has this path.",
        "fields": {},
    }


def test_html_pages_keep_the_html_404(client):
    response = client.get("/campaigns/abc/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_every_operation_documents_the_error_shape():
    raw = schema.raw_schema
    assert raw["components"]["schemas"]["Error"]["required"] == ["message", "fields"]
    for path, operations in raw["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert any(code.startswith("4") for code in codes), (method, path)


def test_paginated_lists_are_documented_as_pages():
    # The list operations answered {"count", "results", ...} but the schema said an array.
    raw = schema.raw_schema
    for path, operations in raw["paths"].items():
        response = operations.get("get", {}).get("responses", {}).get("200", {})
        body = response.get("content", {}).get("application/json", {}).get("schema", {})
        assert body.get("type") != "array", path
    listing = raw["paths"]["/api/campaigns/"]["get"]["responses"]["200"]
    ref = listing["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/PaginatedCampaignOutputList")


@pytest.mark.parametrize("campaign_id", [2**31, 2**63, 10**30])
def test_ids_beyond_the_database_integers_are_not_found(api_client, campaign_id):
    # PostgreSQL rejects such literals; Django's lookups must answer "no such row" first.
    response = api_client.get(f"/api/campaigns/{campaign_id}/originals/")
    assert response.status_code == 404
    assert response.json()["message"]


def test_nul_characters_in_a_json_body_are_refused_on_every_database(api_client, campaign):
    # PostgreSQL refuses NUL in text columns and SQLite would store it: the JSON body's
    # parser refuses it before either sees it, wherever it is.
    response = api_client.post(
        "/api/campaigns/create/", {"name": "A\x00B", "task_type": "sentiment"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"name": ["Holds a NUL character (\\u0000); remove it."]}
