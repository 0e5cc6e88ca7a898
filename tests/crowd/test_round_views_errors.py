"""What a worker is shown when a round cannot go on: an expired or blocked assignment,
a stale tab, an assignment the quality filters ended early (`crowd/round_views.py`)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cfannotate.core.worker_tokens import assignment_token, form_token
from cfannotate.crowd.models import BlockScope, Platform, WorkerBlock
from cfannotate.labeling import rounds
from cfannotate.labeling.assignments import assignment_finish_early, assignment_start
from cfannotate.labeling.models import Assignment, AssignmentState
from tests.factories import make_worker

pytestmark = pytest.mark.django_db


def _start(campaign, platform=Platform.LINK):
    return assignment_start(
        campaign=campaign,
        worker=make_worker(platform),
        platform_assignment_id="" if platform == Platform.LINK else "PA1",
    )


def _url(name, assignment, **kwargs):
    token = assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)
    return reverse(name, kwargs={"token": token, **kwargs})


def _htmx(assignment):
    return {"HX-Request": "true", "X-Worker-Form": form_token(assignment.token_nonce)}


def _answers(assignment, label="positive", valid="valid"):
    data = {"form_token": form_token(assignment.token_nonce)}
    for index in (1, 2, 3):
        data[f"valid-{index}"], data[f"label-{index}"] = valid, label
    return data


def _expire(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )


def _submit_training(client, assignment):
    client.get(_url("worker-round", assignment, position=1))
    response = client.post(
        _url("worker-round-submit", assignment, position=1), _answers(assignment)
    )
    assert response.status_code == 302


# --- 1. An expired assignment says what to do next, under the campaign's name ------------


@pytest.mark.parametrize(
    ("platform", "next_step"),
    [
        (Platform.MTURK, "Return the HIT on MTurk so that it does not count against you."),
        (Platform.PROLIFIC, "Return the study on Prolific so that it does not count against you."),
        (Platform.LINK, "To start a new assignment, open the link you were given again."),
    ],
)
def test_an_expired_assignment_says_what_to_do_next(client, campaign, platform, next_step):
    assignment = _start(campaign, platform)
    client.get(_url("worker-round", assignment, position=1))
    _expire(assignment)
    response = client.get(_url("worker-round", assignment, position=1))
    assert response.status_code == 410
    page = response.content.decode()
    assert "This assignment has ended" in page and next_step in page
    assert f'<span class="brand">{campaign.name}</span>' in page
    assert f"· {campaign.name}</title>" in page
    # No promise of credit the worker cannot claim.
    assert "The rounds you submitted are recorded." in page and "are kept" not in page


# --- 2. An htmx request on an ended assignment loads the whole error page ------------------


def test_an_htmx_submit_or_click_after_expiry_loads_the_round_address(client, campaign):
    assignment = _start(campaign, Platform.MTURK)
    round_url = _url("worker-round", assignment, position=1)
    client.get(round_url)
    _expire(assignment)
    submit = client.post(
        _url("worker-round-submit", assignment, position=1),
        _answers(assignment),
        headers=_htmx(assignment),
    )
    click = client.post(
        _url("worker-item-save", assignment, position=1, index=1),
        {"valid-1": "valid"},
        headers=_htmx(assignment),
    )
    for response in (submit, click):
        assert response.status_code == 410
        assert response["HX-Redirect"] == round_url
    # That address is the full page, with its heading and next step.
    page = client.get(round_url).content.decode()
    assert "<h1>This assignment has ended</h1>" in page and "Return the HIT on MTurk" in page
    # Without htmx, the post itself answers with the full page, as before.
    plain = client.post(_url("worker-round-submit", assignment, position=1), _answers(assignment))
    assert (
        plain.status_code == 410 and "<h1>This assignment has ended</h1>" in plain.content.decode()
    )


def test_an_htmx_click_after_a_block_loads_the_round_address(client, campaign):
    assignment = _start(campaign, Platform.PROLIFIC)
    round_url = _url("worker-round", assignment, position=1)
    client.get(round_url)
    WorkerBlock.objects.create(
        worker=assignment.worker,
        scope=BlockScope.CAMPAIGN,
        campaign=campaign,
        researcher=campaign.owner,
        reason="spam",
    )
    Assignment.objects.filter(pk=assignment.pk).update(state=AssignmentState.RETURNED)
    click = client.post(
        _url("worker-item-save", assignment, position=1, index=1),
        {"valid-1": "valid"},
        headers=_htmx(assignment),
    )
    assert click.status_code == 403 and click["HX-Redirect"] == round_url
    page = client.get(round_url)
    assert page.status_code == 403 and b"return it there" in page.content


# --- 3. A stale tab --------------------------------------------------------------------------


def test_a_click_in_a_stale_tab_says_so_where_the_next_click_still_finds_it(client, campaign):
    assignment = _start(campaign)
    _submit_training(client, assignment)  # in tab A
    # Tab B still shows round 1.
    click = client.post(
        _url("worker-item-save", assignment, position=1, index=2),
        {"valid-2": "invalid"},
        headers=_htmx(assignment),
    )
    assert click.status_code == 409
    html = click.content.decode()
    assert html.startswith('<span class="save-status save-error" id="status-2" role="alert">')
    assert "already submitted" in html and "Reload the page" in html


def test_a_replayed_submit_with_other_answers_says_the_first_ones_are_kept(client, campaign):
    assignment = _start(campaign)
    _submit_training(client, assignment)  # in tab A, "valid" and "positive" throughout
    submit = _url("worker-round-submit", assignment, position=1)
    feedback = _url("worker-round", assignment, position=1)

    # Tab B submits the same answers: lands where A did, silently.
    same = client.post(submit, _answers(assignment))
    assert same["Location"] == feedback
    # Tab B submits other answers: nothing changes, and the worker is told.
    other = client.post(submit, _answers(assignment, label="negative", valid="invalid"))
    assert other["Location"] == feedback + "?notice=submitted-before"
    page = client.get(other["Location"]).content.decode()
    assert "already submitted (in another tab or on another device)" in page
    assert "the answers given then are kept" in page
    judgments = assignment.rounds.get(position=1).judgments
    assert not judgments.filter(is_valid=False).exists()
    assert not judgments.filter(label__value="negative").exists()

    # With htmx, the same notice comes by a whole-page redirect.
    htmx_other = client.post(
        submit, _answers(assignment, label="negative"), headers=_htmx(assignment)
    )
    assert htmx_other["HX-Redirect"] == feedback + "?notice=submitted-before"
    htmx_same = client.post(submit, _answers(assignment), headers=_htmx(assignment))
    assert htmx_same["HX-Redirect"] == feedback


def test_a_notice_is_named_in_the_address_never_written_there(client, campaign):
    assignment = _start(campaign)
    _submit_training(client, assignment)
    page = client.get(_url("worker-round", assignment, position=1) + "?notice=<b>hi</b>")
    assert b"<b>hi</b>" not in page.content and b'class="notice" role="status"' not in page.content


# --- 4. An assignment that ended early says so on the completion page -------------------------


def _submit_served_rounds(assignment):
    label = assignment.campaign.labels.first().value
    for round_ in assignment.rounds.filter(submitted_at=None).order_by("position"):
        if round_.served_at is None:
            rounds.round_serve(assignment=assignment, position=round_.position)
        answers = [rounds.Answer(index=i, is_valid=True, label=label) for i in (1, 2, 3)]
        rounds.round_submit(assignment=assignment, position=round_.position, answers=answers)


EARLY = "Your assignment ended early; the rounds you did are recorded."


def test_the_completion_page_says_when_the_assignment_ended_early(client, campaign):
    assignment = _start(campaign)
    rounds.round_serve(assignment=assignment, position=1)
    assert assignment_finish_early(assignment_id=assignment.id) > 0
    _submit_served_rounds(assignment)  # the round on screen stays the worker's to submit
    page = client.get(_url("worker-done", assignment)).content.decode()
    assert "Thank you, all rounds are submitted" in page and EARLY in page
    # Nothing about why: no verdict, no gold.
    assert "quality" not in page.lower() and "gold" not in page.lower()


def test_the_completion_page_of_a_whole_assignment_says_nothing_of_an_early_end(client, campaign):
    assignment = _start(campaign)
    _submit_served_rounds(assignment)
    assert assignment_finish_early(assignment_id=assignment.id) == 0
    page = client.get(_url("worker-done", assignment)).content.decode()
    assert "Thank you, all rounds are submitted" in page and EARLY not in page
