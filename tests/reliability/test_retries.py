"""Every worker request may be sent twice (a lost response, a retrying client or proxy).

The second copy gets the answer the first got and writes nothing more: a join resumes
the same assignment, a page shown again keeps its clock, a save or submit replayed
after the round was submitted is answered as before, and no unit counts a round twice.
"""

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.core.worker_tokens import assignment_token, form_token, join_token
from cfannotate.labeling.models import Assignment, Judgment, LabelingUnit
from tests.factories import make_labeling_campaign

pytestmark = pytest.mark.django_db


def _answers(assignment, label="positive"):
    data = {"form_token": form_token(assignment.token_nonce)}
    for index in (1, 2, 3):
        data |= {f"valid-{index}": "valid", f"label-{index}": label}
    return data


def test_every_request_of_an_assignment_survives_being_sent_twice():
    campaign = make_labeling_campaign(
        units=4, gold=1, training=1, rounds_per_assignment=2, gold_rounds_per_assignment=1
    )
    client = Client()
    join = reverse("join", kwargs={"token": join_token(campaign.id)}) + "?worker=twice"
    first_join, second_join = client.post(join), client.post(join)
    assert first_join["Location"] == second_join["Location"]
    assignment = Assignment.objects.get()
    token = assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)
    positions = list(assignment.rounds.order_by("position").values_list("position", flat=True))
    for position in positions:
        page = reverse("worker-round", kwargs={"token": token, "position": position})
        assert client.get(page).status_code == 200
        served_at = assignment.rounds.get(position=position).served_at
        assert client.get(page).status_code == 200
        assert assignment.rounds.get(position=position).served_at == served_at

        save = reverse(
            "worker-item-save", kwargs={"token": token, "position": position, "index": 1}
        )
        headers = {"HX-Request": "true", "X-Worker-Form": form_token(assignment.token_nonce)}
        click = {"valid-1": "valid", "label-1": "positive"}
        assert client.post(save, click, headers=headers).status_code == 200
        assert client.post(save, click, headers=headers).status_code == 200

        submit = reverse("worker-round-submit", kwargs={"token": token, "position": position})
        first, replay = (
            client.post(submit, _answers(assignment)),
            client.post(submit, _answers(assignment)),
        )
        assert first.status_code == replay.status_code == 302
        assert first["Location"] == replay["Location"]
        # A late copy of a click that the submit already holds is harmless; a different
        # answer after the submit is refused, and changes nothing.
        assert client.post(save, click, headers=headers).status_code == 200
        changed = client.post(save, {"valid-1": "invalid"}, headers=headers)
        assert changed.status_code == 409 and b"already submitted" in changed.content

    assignment.refresh_from_db()
    code = assignment.completion_code
    assert assignment.state == "submitted" and code
    last = reverse("worker-round-submit", kwargs={"token": token, "position": positions[-1]})
    # Other answers than the submitted ones: the worker is told those are kept.
    other = client.post(last, _answers(assignment, label="negative"))
    assert other["Location"].endswith("/done/?notice=submitted-before")
    assignment.refresh_from_db()
    assert assignment.completion_code == code
    judgments = Judgment.objects.filter(round__assignment=assignment)
    assert judgments.count() == 3 * len(positions)
    assert not judgments.filter(label__value="negative").exists()
    assert not judgments.filter(is_valid=False).exists()
    units = LabelingUnit.objects.filter(rounds__assignment=assignment)
    assert set(units.values_list("completed", "claims")) == {(1, 1)}


def test_an_htmx_submit_sent_twice_leads_to_the_same_round_served_once():
    campaign = make_labeling_campaign(
        units=4, gold=0, training=0, rounds_per_assignment=2, gold_rounds_per_assignment=0
    )
    client = Client()
    client.post(reverse("join", kwargs={"token": join_token(campaign.id)}) + "?worker=twice")
    assignment = Assignment.objects.get()
    token = assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)
    client.get(reverse("worker-round", kwargs={"token": token, "position": 1}))
    submit = reverse("worker-round-submit", kwargs={"token": token, "position": 1})
    headers = {"HX-Request": "true"}
    first = client.post(submit, _answers(assignment), headers=headers)
    served_at = assignment.rounds.get(position=2).served_at
    replay = client.post(submit, _answers(assignment, label="negative"), headers=headers)
    # The first answer held the next round; the replay's sends the browser to it, saying
    # that the first answers are kept (the replay's differ).
    next_round = reverse("worker-round", kwargs={"token": token, "position": 2})
    assert first.status_code == 200 and first["HX-Push-Url"] == next_round
    assert replay.status_code == 200
    assert replay["HX-Redirect"] == next_round + "?notice=submitted-before"
    assert served_at is not None and client.get(next_round).status_code == 200
    assert assignment.rounds.get(position=2).served_at == served_at  # its clock kept
    assert Judgment.objects.filter(round__position=2).count() == 3
    assert not Judgment.objects.filter(label__value="negative").exists()
    assert LabelingUnit.objects.filter(completed=1).count() == 1
