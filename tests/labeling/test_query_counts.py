"""The hot worker requests stay within a fixed number of queries, whatever the campaign size.

A 200-worker campaign sends these requests hundreds of times a second
(`bench/load.py`); a query added to one of them shows up here first. The counts
include the savepoints of the test's transaction (one per atomic block).
"""

import re

import pytest
from django.urls import reverse

from cfannotate.core.worker_tokens import assignment_token, form_token, join_token
from cfannotate.labeling.models import Assignment
from tests.factories import make_labeling_campaign

pytestmark = pytest.mark.django_db

# A round's first showing reads its content; the save and the submit find it cached.
# Joining also reads the worker's blocks (one query) and quality verdict (one query).
SERVE, SAVE, SUBMIT, LAST_SUBMIT, JOIN = 9, 7, 9, 10, 26
# htmx's submit serves the next round in the same transaction: 12 against SUBMIT + SERVE.
SUBMIT_AND_SERVE = 12


@pytest.fixture
def started(client):
    """A worker who joined a campaign large enough that sizes would show (40 units)."""
    campaign = make_labeling_campaign(
        units=40, gold=3, training=1, rounds_per_assignment=4, gold_rounds_per_assignment=1
    )
    client.post(reverse("join", kwargs={"token": join_token(campaign.id)}) + "?worker=w1")
    assignment = Assignment.objects.get()
    return assignment, assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)


def _url(name, token, **kwargs):
    return reverse(name, kwargs={"token": token, **kwargs})


def _answers(assignment):
    data = {"form_token": form_token(assignment.token_nonce)}
    for index in (1, 2, 3):
        data |= {f"valid-{index}": "valid", f"label-{index}": "positive"}
    return data


def _do_round(client, assignment, token, position, django_assert_max_num_queries):
    with django_assert_max_num_queries(SERVE):
        page = client.get(_url("worker-round", token, position=position))
    assert page.status_code == 200 and b'id="round-form"' in page.content
    with django_assert_max_num_queries(SAVE):
        saved = client.post(
            _url("worker-item-save", token, position=position, index=2),
            {"valid-2": "invalid", "label-2": "negative"},
            headers={"HX-Request": "true", "X-Worker-Form": form_token(assignment.token_nonce)},
        )
    assert saved.status_code == 200 and b"Saved" in saved.content


def test_serve_save_and_submit_stay_within_their_query_budget(
    client, started, django_assert_max_num_queries
):
    assignment, token = started
    positions = list(assignment.rounds.order_by("position").values_list("position", flat=True))
    for position in positions:
        _do_round(client, assignment, token, position, django_assert_max_num_queries)
        last = position == positions[-1]
        with django_assert_max_num_queries(LAST_SUBMIT if last else SUBMIT):
            submitted = client.post(
                _url("worker-round-submit", token, position=position), _answers(assignment)
            )
        assert submitted.status_code == 302
    assignment.refresh_from_db()
    assert assignment.state == "submitted"


def test_an_htmx_submit_serves_the_next_round_for_less_than_two_requests(
    client, started, django_assert_max_num_queries
):
    assignment, token = started
    positions = list(assignment.rounds.order_by("position").values_list("position", flat=True))
    client.get(_url("worker-round", token, position=positions[0]))
    for position in positions[:-1]:
        with django_assert_max_num_queries(SUBMIT_AND_SERVE):
            response = client.post(
                _url("worker-round-submit", token, position=position),
                _answers(assignment),
                headers={"HX-Request": "true"},
            )
        following = _url("worker-round", token, position=position + 1)
        # The training round's feedback loads as a page, which serves nothing.
        if "HX-Redirect" in response:
            assert response["HX-Redirect"] == _url("worker-round", token, position=position)
            client.get(following)
        else:
            assert response["HX-Push-Url"] == following and b'id="round-form"' in response.content


def test_a_replayed_submit_is_cheaper_than_the_first(
    client, started, django_assert_max_num_queries
):
    assignment, token = started
    client.get(_url("worker-round", token, position=1))
    url = _url("worker-round-submit", token, position=1)
    first = client.post(url, _answers(assignment))
    # 6: the replay reads the round's judgments, to tell the worker if its answers differ.
    with django_assert_max_num_queries(6):
        replay = client.post(url, _answers(assignment))
    assert replay["Location"] == first["Location"]


def test_joining_stays_within_its_query_budget(client, django_assert_max_num_queries):
    campaign = make_labeling_campaign(
        units=40, gold=3, training=1, rounds_per_assignment=4, gold_rounds_per_assignment=1
    )
    join = reverse("join", kwargs={"token": join_token(campaign.id)})
    with django_assert_max_num_queries(JOIN):
        response = client.post(join)
    assert response.status_code == 302
    assert re.search(r"/w/[^/]+/$", response["Location"])
