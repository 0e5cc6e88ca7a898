"""Prolific against a local fake of its REST API (tests/crowd/fake_prolific.py)."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.worker_tokens import assignment_token_read, worker_token
from cfannotate.crowd import review
from cfannotate.crowd.models import (
    ActionOutcome,
    AssignmentReview,
    BlockScope,
    PlatformAction,
    Publication,
    ReviewDecision,
    Worker,
    WorkerStatus,
)
from cfannotate.crowd.providers import NotVerified, PlatformError
from cfannotate.crowd.providers.prolific import ProlificOptions
from cfannotate.crowd.providers.prolific_api import ProlificClient
from cfannotate.crowd.publishing import entry_url, platform_sync, prolific_study_create
from cfannotate.labeling.models import Assignment, AssignmentState, LabelingUnit
from tests.crowd.conftest import entry_path, finish, make_prolific_publication

pytestmark = pytest.mark.django_db
STUDY = "a" * 24
PID = "5f" + "0" * 22
SESSION = "6a" + "1" * 22
LONG_REASON = (
    "You answered the hidden check rounds of this task at random, so the labels you gave "
    "cannot be used; see the instructions on valid edits."
)


def _options(**changes):
    values = {
        "name": "Judge edited movie reviews",
        "description": "Read a sentence and three edited versions; judge each.",
        "places": 12,
        "reward_cents": 250,
        "minutes": 15,
    }
    return ProlificOptions(**{**values, **changes})


def _enter(client, publication, pid=PID, session=SESSION, study=STUDY):
    params = {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}
    return client.get(entry_path(publication, **params))


def _entered(client, campaign, **kwargs):
    publication = Publication.objects.filter(campaign=campaign).first()
    publication = publication or make_prolific_publication(campaign)
    response = _enter(client, publication, **kwargs)
    assert response.status_code == 302, response.content
    token = response["Location"].split("/w/")[1].split("/")[0]
    return Assignment.objects.get(id=assignment_token_read(token).assignment_id)


# --- Publishing ---------------------------------------------------------------------------------


def test_a_draft_study_gets_our_entry_url_and_a_manually_reviewed_completion_code(
    campaign, prolific
):
    publication = prolific_study_create(
        campaign=campaign, options=_options(), base_url="https://labels.example.org"
    )
    (request,) = prolific.calls("POST", "studies")
    body = request[2]
    assert request[3] == f"Token {prolific.token}"
    url = entry_url(publication=publication, base_url="https://labels.example.org")
    assert body["external_study_url"] == (
        f"{url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}"
    )
    assert body["prolific_id_option"] == "url_parameters"
    assert body["completion_codes"] == [
        {
            "code": publication.completion_code,
            "code_type": "COMPLETED",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        }
    ]
    assert (body["total_available_places"], body["reward"], body["estimated_completion_time"]) == (
        12,
        250,
        15,
    )
    assert publication.external_id in prolific.studies
    assert publication.status == "UNPUBLISHED" and len(publication.completion_code) == 8


def test_bad_study_options_are_refused_before_prolific_is_called(campaign, prolific):
    with pytest.raises(InvalidInput) as caught:
        prolific_study_create(
            campaign=campaign, options=_options(places=0, name=""), base_url="https://x.org"
        )
    assert set(caught.value.fields) == {"places", "name"}
    assert prolific.requests == [] and not Publication.objects.exists()


def test_a_refused_study_is_recorded_as_failed(campaign, prolific):
    prolific.refuse["studies"] = (400, {"error": {"detail": "reward is below the minimum"}})
    with pytest.raises(PlatformError, match="reward is below the minimum"):
        prolific_study_create(campaign=campaign, options=_options(), base_url="https://x.org")
    assert Publication.objects.get().status == "failed"
    assert PlatformAction.objects.get().outcome == ActionOutcome.FAILED


# --- Entry and completion ------------------------------------------------------------------


def test_entry_binds_participant_study_and_session_and_resumes(client, campaign):
    assignment = _entered(client, campaign)
    assert (assignment.worker.platform, assignment.worker.external_id) == ("prolific", PID)
    assert (assignment.platform_assignment_id, assignment.platform_task_id) == (SESSION, STUDY)
    assert _entered(client, campaign).id == assignment.id


def test_a_second_session_with_only_the_participant_id_takes_nothing_over(client, campaign):
    """Anyone who knows a PROLIFIC_PID can put it in the URL, with a session id of their own."""
    victims = _entered(client, campaign)
    own_pages = reverse("worker-start", kwargs={"token": worker_token(victims)})
    refused = _enter(Client(), Publication.objects.get(), session="7b" + "2" * 22)
    assert refused.status_code == 409 and "Location" not in refused
    page = refused.content.decode()
    assert "This task is open in another session" in page and "another Prolific session" in page
    assert SESSION not in page and 'class="site-header worker-header"' in page
    victims.refresh_from_db()
    assert (victims.platform_assignment_id, victims.platform_task_id) == (SESSION, STUDY)
    assert Assignment.objects.count() == 1
    # The participant's own session coming back resumes, and their pages still work.
    assert _entered(client, campaign).id == victims.id
    assert client.get(own_pages).status_code in (200, 302)


def test_opened_without_prolifics_parameters_it_is_only_a_preview(client, campaign):
    publication = make_prolific_publication(campaign)
    response = client.get(entry_path(publication))
    assert response.status_code == 200 and b"Open the study from Prolific" in response.content
    assert not Assignment.objects.exists()
    # Prolific does not frame studies: the preview denies framing.
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"study": "b" * 24}, 403, "another Prolific study"),
        ({"session": ""}, 400, "without Prolific&#x27;s SESSION_ID"),
        ({"pid": "not/an/id"}, 400, "PROLIFIC_PID is not a Prolific id"),
    ],
)
def test_bad_prolific_entries_are_refused(client, campaign, params, status, message):
    publication = make_prolific_publication(campaign)
    response = _enter(client, publication, **params)
    assert response.status_code == status and message in response.content.decode()
    assert not Assignment.objects.exists()


def test_completion_sends_the_worker_back_with_the_studys_code(client, campaign):
    assignment = finish(_entered(client, campaign))
    page = client.get(reverse("worker-done", kwargs={"token": worker_token(assignment)}))
    html = page.content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0DE1234"' in html
    # The code shown is the one Prolific takes typed by hand: the study's, not ours.
    assert '<output id="completion-code">C0DE1234</output>' in html
    assert assignment.completion_code not in html
    assert "if the button does not work, enter the code above on Prolific" in html


# --- Review --------------------------------------------------------------------------------


@pytest.fixture
def submitted(client, campaign, prolific):
    assignment = finish(_entered(client, campaign))
    prolific.add_submission(id=SESSION, participant=PID, study=STUDY)
    return assignment


def test_approve_checks_the_submission_then_approves_it(submitted, prolific):
    review.assignment_approve(assignment=submitted)
    assert prolific.submissions[SESSION]["status"] == "APPROVED"
    assert [r[2] for r in prolific.calls("POST", "submissions/")] == [{"action": "APPROVE"}]
    assert Assignment.objects.get(pk=submitted.pk).review.decision == ReviewDecision.APPROVED


def test_approve_refuses_a_submission_of_another_participant(submitted, prolific):
    prolific.submissions[SESSION]["participant_id"] = "someoneelse"
    with pytest.raises(NotVerified, match="participant someoneelse's"):
        review.assignment_approve(assignment=submitted)
    assert prolific.calls("POST", "submissions/") == []
    assert not AssignmentReview.objects.exists()


def test_reject_needs_prolifics_long_message_and_a_category(submitted, prolific, settings):
    with pytest.raises(InvalidInput, match="at least 100 characters"):
        review.assignment_reject(assignment=submitted, feedback="Random answers.")
    review.assignment_reject(assignment=submitted, feedback=LONG_REASON)
    (call,) = prolific.calls("POST", "submissions/")
    assert call[2] == {
        "action": "REJECT",
        "message": LONG_REASON,
        "rejection_category": settings.CROWD_PROLIFIC_REJECTION_CATEGORY,
    }
    assert prolific.submissions[SESSION]["status"] == "REJECTED"


def test_a_bonus_is_set_up_and_paid_once(submitted, prolific):
    for _ in range(2):
        review.worker_bonus(
            assignment=submitted, amount=Decimal("0.50"), reason="Top", unique_token="b-1"
        )
    assert [b["cents"] for b in prolific.batches.values()] == [50]
    assert prolific.batches["bonus1"]["paid"]
    assert prolific.calls("POST", "submissions/bonus-payments")[0][2] == {
        "study_id": STUDY,
        "csv_bonuses": f"{PID},0.50\n",
    }


def test_a_bonus_whose_payment_answer_was_lost_is_not_paid_again(submitted, prolific):
    prolific.refuse["bulk-bonus-payments"] = (503, {"error": {"detail": "try later"}})
    with pytest.raises(PlatformError, match="set up but not confirmed as paid"):
        review.worker_bonus(
            assignment=submitted, amount=Decimal("0.50"), reason="Top", unique_token="b-2"
        )
    # Unknown to us, it was paid: Prolific lists the bonus on the submission.
    prolific.submissions[SESSION]["bonus_payments"].append(50)
    review.worker_bonus(
        assignment=submitted, amount=Decimal("0.50"), reason="Top", unique_token="b-2"
    )
    assert len(prolific.calls("POST", "submissions/bonus-payments")) == 1
    assert PlatformAction.objects.filter(outcome=ActionOutcome.SUCCEEDED).count() == 1


def test_block_adds_the_participant_to_the_blocklist_group(submitted, prolific, settings):
    settings.CROWD_PROLIFIC_BLOCKLIST_GROUP = "group1"
    review.worker_block(
        worker=submitted.worker, reason="Random answers.", scope=BlockScope.EVERYWHERE
    )
    assert prolific.groups["group1"] == {PID}
    assert Worker.objects.get(pk=submitted.worker_id).status == WorkerStatus.BLOCKED
    assert PlatformAction.objects.get(action="block").outcome == ActionOutcome.SUCCEEDED


def test_block_without_a_blocklist_group_is_recorded_as_local(submitted, prolific):
    review.worker_block(
        worker=submitted.worker, reason="Random answers.", scope=BlockScope.EVERYWHERE
    )
    assert prolific.groups == {}
    action = PlatformAction.objects.get(action="block")
    assert action.outcome == ActionOutcome.LOCAL and "blocklist" in action.response["note"]


# --- Sync ------------------------------------------------------------------------------------


def test_sync_frees_units_of_returned_and_timed_out_participants(client, campaign, prolific):
    make_prolific_publication(campaign)
    returned = _entered(client, campaign, pid="p1", session="s1")
    timed_out = _entered(client, campaign, pid="p2", session="s2")
    working = _entered(client, campaign, pid="p3", session="s3")
    assert LabelingUnit.objects.filter(claims__gt=0).exists()
    prolific.studies[STUDY] = {"id": STUDY, "status": "ACTIVE"}
    prolific.add_submission(id="s1", participant="p1", study=STUDY, status="RETURNED")
    prolific.add_submission(id="s2", participant="p2", study=STUDY, status="TIMED-OUT")
    prolific.add_submission(id="s3", participant="p3", study=STUDY, status="ACTIVE")
    prolific.add_submission(id="s4", participant="p4", study=STUDY, status="AWAITING REVIEW")
    report = platform_sync(campaign=campaign)
    states = {a.id: a.state for a in Assignment.objects.all()}
    assert states[returned.id] == states[timed_out.id] == AssignmentState.RETURNED
    assert states[working.id] == AssignmentState.ACTIVE
    assert report.freed == 2 and report.checked == 4  # four submissions over two pages
    assert any("s4" in problem for problem in report.problems)
    assert len(prolific.calls("GET", "submissions")) == 2
    held = sum(LabelingUnit.objects.values_list("claims", flat=True))
    assert held == working.rounds.filter(kind="real").count()


def test_sync_records_decisions_made_on_prolific(submitted, prolific):
    prolific.studies[STUDY] = {"id": STUDY, "status": "AWAITING REVIEW"}
    prolific.submissions[SESSION]["status"] = "APPROVED"
    report = platform_sync(campaign=submitted.campaign)
    assert report.reviews == 1
    assert Assignment.objects.get(pk=submitted.pk).review.decision == ReviewDecision.APPROVED
    assert Publication.objects.get().status == "AWAITING REVIEW"


# --- Failures ------------------------------------------------------------------------------------


def test_an_unreachable_prolific_is_one_clear_error(submitted, settings):
    settings.CROWD_PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"  # nothing listens there
    with pytest.raises(PlatformError, match="Prolific could not be reached"):
        review.assignment_approve(assignment=submitted)
    assert PlatformAction.objects.get().outcome == ActionOutcome.FAILED


def test_a_wrong_or_missing_token_says_so(submitted, settings):
    settings.CROWD_PROLIFIC_TOKEN = "wrong"
    with pytest.raises(PlatformError, match="did not accept the API token"):
        review.assignment_approve(assignment=submitted)
    settings.CROWD_PROLIFIC_TOKEN = ""
    with pytest.raises(PlatformError, match="CFANNOTATE_PROLIFIC_TOKEN"):
        review.assignment_approve(assignment=submitted)


def test_the_client_never_sends_the_token_to_another_host(prolific):
    prolific.studies[STUDY] = {"id": STUDY}
    prolific.add_submission(id="s1", participant="p1", study=STUDY)
    prolific.add_submission(id="s2", participant="p2", study=STUDY)
    prolific.add_submission(id="s3", participant="p3", study=STUDY)
    prolific.url = "http://elsewhere.example/api/v1/"  # its next-page links now point away
    with pytest.raises(PlatformError, match="another host"):
        ProlificClient().submissions(STUDY)


@pytest.mark.parametrize(
    ("status", "body", "said", "fix"),
    [
        (
            400,
            {"error": {"detail": ["Too many places.", "Bad URL"]}},
            "Too many places. Bad URL.",
            "",
        ),
        (400, {"detail": {"name": "required"}}, "(400): name: required.", ""),
        (502, "<html><body><h1>Bad gateway</h1></body></html>", "(502): Bad Gateway", "its side"),
        (403, {"error": {"title": "Forbidden"}}, "(403): Forbidden.", "workspace"),
        (429, {"detail": "Slow down"}, "Slow down.", "wait a minute"),
    ],
)
def test_prolific_refusals_are_sentences_with_what_to_fix(monkeypatch, status, body, said, fix):
    import httpx

    def answer(method, url, **kwargs):
        request = httpx.Request(method, url)
        if isinstance(body, str):
            return httpx.Response(status, text=body, request=request)
        return httpx.Response(status, json=body, request=request)

    monkeypatch.setattr(httpx, "request", answer)
    client = ProlificClient(base_url="https://api.prolific.example/api/v1/", token="t")
    with pytest.raises(PlatformError) as caught:
        client.study_get("a" * 24)
    assert said in caught.value.message
    assert "<" not in caught.value.message and "{" not in caught.value.message
    assert ".." not in caught.value.message
    assert fix in caught.value.fix
