"""A worker who vanishes mid-assignment: the lease runs out, the units go to someone else.

Through the worker pages (any database): worker A submits a round, saves a click in the
next one and disappears. Once A's lease has run out, worker B joins, is handed the
units A held, and finishes them. A comes back: the late save and the late submit are
refused with a clear 410, the round A submitted before still answers its replay, and
every unit ends with exactly K submitted rounds, A's unsubmitted clicks counting nowhere.
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cfannotate.core.worker_tokens import (
    assignment_token,
    assignment_token_read,
    form_token,
    join_token,
)
from cfannotate.labeling.models import Assignment, AssignmentState, LabelingUnit, Round
from cfannotate.quality.models import AggregatedLabel
from cfannotate.quality.tasks import assess_assignment
from tests.factories import make_labeling_campaign

pytestmark = pytest.mark.django_db

ANSWERS = {"valid-1": "valid", "label-1": "positive", "valid-2": "valid", "label-2": "negative"}
ANSWERS |= {"valid-3": "invalid", "label-3": "positive"}


def _join(campaign) -> tuple[Client, Assignment, str]:
    """A new browser joins through the campaign's link, as a new anonymous worker."""
    client = Client()
    join = reverse("join", kwargs={"token": join_token(campaign.id)})
    response = client.post(join)
    assert response.status_code == 302, response.content
    token = response["Location"].split("/w/")[1].split("/")[0]
    assignment = Assignment.objects.get(id=assignment_token_read(token).assignment_id)
    return (
        client,
        assignment,
        assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce),
    )


def _url(name: str, token: str, **kwargs) -> str:
    return reverse(name, kwargs={"token": token, **kwargs})


def _submit(client, assignment, token, position):
    data = {"form_token": form_token(assignment.token_nonce), **ANSWERS}
    return client.post(_url("worker-round-submit", token, position=position), data)


def test_a_vanished_workers_units_go_to_another_and_the_late_submit_is_refused():
    campaign = make_labeling_campaign(
        units=3, gold=0, training=0, k=1, rounds_per_assignment=3, gold_rounds_per_assignment=0
    )
    a_client, a, a_token = _join(campaign)
    assert a_client.get(_url("worker-round", a_token, position=1)).status_code == 200
    assert _submit(a_client, a, a_token, 1).status_code == 302
    assert a_client.get(_url("worker-round", a_token, position=2)).status_code == 200
    click = a_client.post(
        _url("worker-item-save", a_token, position=2, index=1),
        {"valid-1": "invalid", "label-1": "negative"},
        headers={"HX-Request": "true", "X-Worker-Form": form_token(a.token_nonce)},
    )
    assert click.status_code == 200
    held = set(a.rounds.filter(submitted_at=None).values_list("unit_id", flat=True))
    assert len(held) == 2 and LabelingUnit.objects.filter(claims=1).count() == 3

    # A's lease runs out; the next worker to join expires it and gets the units back.
    Assignment.objects.filter(pk=a.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    b_client, b, b_token = _join(campaign)
    assert set(b.rounds.values_list("unit_id", flat=True)) == held
    for position in (1, 2):
        assert b_client.get(_url("worker-round", b_token, position=position)).status_code == 200
        assert _submit(b_client, b, b_token, position).status_code == 302
    a.refresh_from_db()
    assert a.state == AssignmentState.EXPIRED

    # A comes back: refused with a message, nothing written.
    late_click = a_client.post(
        _url("worker-item-save", a_token, position=2, index=2),
        {"valid-2": "valid", "label-2": "positive"},
        headers={"HX-Request": "true", "X-Worker-Form": form_token(a.token_nonce)},
    )
    late_submit = _submit(a_client, a, a_token, 2)
    # The click (htmx) loads the round's address, which is the whole page that says why.
    round_2 = _url("worker-round", a_token, position=2)
    assert late_click.status_code == 410 and late_click["HX-Redirect"] == round_2
    for response in (a_client.get(round_2), late_submit):
        assert response.status_code == 410
        assert b"expired after" in response.content
        assert b"The rounds you submitted are recorded" in response.content
    assert not Round.objects.filter(assignment=a, position=2, submitted_at__isnull=False).exists()
    # The round A did submit stays, and its replay still lands where it did.
    assert _submit(a_client, a, a_token, 1).status_code == 302

    for unit in LabelingUnit.objects.filter(campaign=campaign):
        submitted = unit.rounds.filter(submitted_at__isnull=False)
        assert unit.claims == unit.completed == submitted.count() == 1
    # Quality control (queued at expiry and at B's end) counts one vote per candidate.
    assess_assignment.call(a.id)
    assess_assignment.call(b.id)
    votes = AggregatedLabel.objects.filter(candidate__campaign=campaign)
    assert votes.count() == 9 and set(votes.values_list("votes", flat=True)) == {1}


def test_a_late_click_on_a_lapsed_lease_gives_the_units_back_even_though_it_is_refused():
    """The expiry commits on its own: the refusal that follows does not roll it back."""
    campaign = make_labeling_campaign(
        units=2, gold=0, training=0, k=1, rounds_per_assignment=2, gold_rounds_per_assignment=0
    )
    client, a, token = _join(campaign)
    assert client.get(_url("worker-round", token, position=1)).status_code == 200
    Assignment.objects.filter(pk=a.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    click = client.post(
        _url("worker-item-save", token, position=1, index=1),
        {"valid-1": "valid"},
        headers={"HX-Request": "true", "X-Worker-Form": form_token(a.token_nonce)},
    )
    assert click.status_code == 410
    a.refresh_from_db()
    assert a.state == AssignmentState.EXPIRED
    assert set(LabelingUnit.objects.values_list("claims", flat=True)) == {0}
    assert not a.rounds.filter(judgments__is_valid__isnull=False).exists()
