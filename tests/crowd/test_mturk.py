"""MTurk through boto3's Stubber: every API call is queued with the parameters it must carry."""

import datetime
import re
from decimal import Decimal
from xml.etree import ElementTree

import pytest
from botocore.exceptions import EndpointConnectionError
from django.db.models import F
from django.test import Client
from django.urls import reverse

from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.core.worker_tokens import assignment_token_read, worker_token
from cfannotate.crowd import review
from cfannotate.crowd.models import (
    ActionOutcome,
    AssignmentReview,
    BlockScope,
    MTurkHit,
    Platform,
    PlatformAction,
    Publication,
    ReviewDecision,
    Worker,
    WorkerStatus,
)
from cfannotate.crowd.providers import NotVerified, PlatformError, mturk
from cfannotate.crowd.providers.mturk import MTurkOptions, answer_fields, external_question
from cfannotate.crowd.publishing import entry_url, mturk_publish, platform_sync
from cfannotate.labeling.assignments import assignment_return
from cfannotate.labeling.models import Assignment, AssignmentState, LabelingUnit
from tests.crowd.conftest import (
    SUBMIT_SANDBOX,
    Match,
    entry_path,
    finish,
    make_mturk_publication,
    mturk_params,
)

pytestmark = pytest.mark.django_db
NOW = datetime.datetime(2026, 5, 1, 12, 0, tzinfo=datetime.UTC)


def _options(**changes) -> MTurkOptions:
    values = {
        "title": "Judge edited sentences",
        "description": "Say whether edited sentences are valid and what label they have.",
        "reward": Decimal("2.50"),
        "assignments": 12,
    }
    return MTurkOptions(**{**values, **changes})


def answer_xml(code: str) -> str:
    return (
        '<?xml version="1.0" encoding="ASCII"?><QuestionFormAnswers xmlns="http://mechanical'
        'turk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd">'
        "<Answer><QuestionIdentifier>assignmentId</QuestionIdentifier><FreeText>X</FreeText>"
        "</Answer><Answer><QuestionIdentifier>completion_code</QuestionIdentifier>"
        f"<FreeText>{code}</FreeText></Answer></QuestionFormAnswers>"
    )


def _remote(assignment, *, status="Submitted", worker=None, hit=None, code=None):
    return {
        "Assignment": {
            "AssignmentId": assignment.platform_assignment_id,
            "WorkerId": worker or assignment.worker.external_id,
            "HITId": hit or assignment.platform_task_id,
            "AssignmentStatus": status,
            "Answer": answer_xml(assignment.completion_code if code is None else code),
        }
    }


def _entered(client, campaign, **params):
    publication = Publication.objects.filter(campaign=campaign).first() or make_mturk_publication(
        campaign
    )
    response = client.get(entry_path(publication, **mturk_params(**params)))
    assert response.status_code == 302, response.content
    token = response["Location"].split("/w/")[1].split("/")[0]
    return Assignment.objects.get(id=assignment_token_read(token).assignment_id), response


# --- Publishing ------------------------------------------------------------------------------


def test_publishing_creates_a_hit_type_with_c2_qualifications_and_external_question_hits(
    campaign, mturk_stub
):
    mturk_stub.add_response(
        "create_hit_type",
        {"HITTypeId": "HITTYPE9"},
        expected_params={
            "AutoApprovalDelayInSeconds": 3 * 24 * 3600,
            "AssignmentDurationInSeconds": 120 * 60,
            "Reward": "2.50",
            "Title": "Judge edited sentences",
            "Keywords": MTurkOptions.keywords,
            "Description": "Say whether edited sentences are valid and what label they have.",
            "QualificationRequirements": [
                {
                    "QualificationTypeId": "00000000000000000071",
                    "Comparator": "EqualTo",
                    "LocaleValues": [{"Country": "US"}],
                    "ActionsGuarded": "Accept",
                },
                {
                    "QualificationTypeId": "000000000000000000L0",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [97],
                    "ActionsGuarded": "Accept",
                },
                {
                    "QualificationTypeId": "00000000000000000040",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [1000],
                    "ActionsGuarded": "Accept",
                },
            ],
        },
    )
    questions = []
    for index, (hit_id, size) in enumerate([("HITA", 9), ("HITB", 3)]):
        question = Match(lambda xml: "<ExternalQuestion" in xml)
        questions.append(question)
        mturk_stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": hit_id, "MaxAssignments": size, "HITStatus": "Assignable"}},
            expected_params={
                "HITTypeId": "HITTYPE9",
                "MaxAssignments": size,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": question,
                "RequesterAnnotation": f"cfannotate campaign {campaign.id}",
                "UniqueRequestToken": Match(lambda token, i=index: token.endswith(f"-{i}")),
            },
        )
    publication = mturk_publish(
        campaign=campaign, options=_options(), base_url="https://labels.example.org"
    )
    assert mturk_stub.environments == [True]  # the sandbox unless asked otherwise
    assert publication.external_id == "HITTYPE9" and publication.sandbox
    assert list(publication.hits.values_list("hit_id", "max_assignments")) == [
        ("HITA", 9),
        ("HITB", 3),
    ]
    xml = ElementTree.fromstring(questions[0].value)  # noqa: S314
    ns = {"q": mturk.EXTERNAL_QUESTION_NS}
    url = xml.find("q:ExternalURL", ns).text
    assert url == entry_url(publication=publication, base_url="https://labels.example.org")
    assert url.startswith("https://labels.example.org/join/mturk/")
    assert xml.find("q:FrameHeight", ns).text == "800"
    action = PlatformAction.objects.get(action="publish")
    assert action.outcome == ActionOutcome.SUCCEEDED and action.response["hits"] == ["HITA", "HITB"]


def test_qualifications_are_configurable_and_can_be_dropped():
    assert (
        _options(
            locale="", min_approval_percent=None, min_approved_hits=None
        ).qualification_requirements()
        == []
    )
    custom = _options(locale="GB", min_approval_percent=99, min_approved_hits=5000)
    values = [
        r.get("IntegerValues") or r["LocaleValues"] for r in custom.qualification_requirements()
    ]
    assert values == [[{"Country": "GB"}], [99], [5000]]


def test_external_question_escapes_the_url():
    xml = external_question("https://x.org/join/mturk/t/?a=1&b=2", 0)
    assert "&amp;b=2" in xml and "<FrameHeight>0</FrameHeight>" in xml


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"reward": Decimal("0.001")}, "reward"),
        ({"reward": Decimal("0")}, "reward"),
        ({"title": ""}, "title"),
        ({"assignments": 0}, "assignments"),
        ({"auto_approve_days": 31}, "auto_approve_days"),
        ({"locale": "USA"}, "locale"),
        ({"min_approval_percent": 101}, "min_approval_percent"),
    ],
)
def test_bad_publishing_options_are_refused_before_mturk_is_called(
    campaign, mturk_stub, changes, field
):
    with pytest.raises(InvalidInput) as caught:
        mturk_publish(campaign=campaign, options=_options(**changes), base_url="https://x.org")
    assert field in caught.value.fields
    assert not Publication.objects.exists()


def test_publishing_needs_https_and_an_open_campaign(campaign, mturk_stub):
    with pytest.raises(InvalidInput, match="CFANNOTATE_PUBLIC_URL"):
        mturk_publish(campaign=campaign, options=_options(), base_url="http://127.0.0.1:8000")
    campaign.status = "paused"
    campaign.save()
    with pytest.raises(Conflict, match="Open the campaign for labeling"):
        mturk_publish(campaign=campaign, options=_options(), base_url="https://x.org")
    assert not Publication.objects.exists()


def test_a_refusal_midway_keeps_the_hits_created_and_says_how_many(campaign, mturk_stub):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HITA"}})
    mturk_stub.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="ServiceFault",
        service_message="Insufficient funds",
        http_status_code=400,
    )
    with pytest.raises(PlatformError, match=r"1 of 2 HITs were created.*Insufficient funds"):
        mturk_publish(campaign=campaign, options=_options(), base_url="https://x.org")
    assert list(MTurkHit.objects.values_list("hit_id", flat=True)) == ["HITA"]
    action = PlatformAction.objects.get(action="publish")
    assert action.outcome == ActionOutcome.FAILED and "Insufficient funds" in action.error


# --- Entry and preview ---------------------------------------------------------------------------


def test_preview_shows_instructions_and_an_example_and_claims_nothing(client, campaign):
    publication = make_mturk_publication(campaign)
    response = client.get(
        entry_path(publication, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="HIT1")
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Accept the HIT to start" in page and "An example round" in page
    assert "disabled" in page and "Known answer" not in page  # no expected answers
    assert not Worker.objects.exists() and not Assignment.objects.exists()
    assert not LabelingUnit.objects.filter(claims__gt=0).exists()
    assert "frame-ancestors 'self' https://www.mturk.com" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response
    assert "data-all-taken" not in page


def test_a_preview_says_before_accepting_when_other_workers_hold_every_round(client, campaign):
    publication = make_mturk_publication(campaign)
    LabelingUnit.objects.filter(campaign=campaign).update(claims=F("judgments_needed"))
    preview = entry_path(publication, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="HIT1")
    page = client.get(preview).content.decode()
    assert "Other workers are doing every open round of this task right now." in page
    assert "try again in about" in page


def test_entry_binds_the_platform_ids_and_a_reload_resumes(client, campaign):
    assignment, response = _entered(client, campaign)
    assert (assignment.platform_assignment_id, assignment.platform_task_id) == ("ASSIGN1", "HIT1")
    assert (assignment.worker.platform, assignment.worker.external_id) == ("mturk", "AWORKER1")
    assert assignment_token_read(worker_token(assignment)).binding  # the ids are in the token
    assert "frame-ancestors" in response["Content-Security-Policy"]
    assert not response.cookies  # nothing relies on a third-party cookie
    again, second = _entered(client, campaign)
    assert again.id == assignment.id and second["Location"] == response["Location"]
    assert Assignment.objects.count() == 1


def test_worker_pages_of_mturk_workers_may_be_framed_by_mturk_only(client, campaign):
    _, response = _entered(client, campaign)
    page = client.get(response["Location"])
    policy = page["Content-Security-Policy"]
    assert re.search(
        r"frame-ancestors 'self' https://www.mturk.com https://worker.mturk.com "
        r"https://workersandbox.mturk.com(;|$)",
        policy,
    )
    assert "X-Frame-Options" not in page


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"worker": "ASOMEONEELSE"}, 403, "belongs to another worker"),
        ({"assignment": "ASSIGN2", "hit": "HITNOTOURS"}, 403, "not part of this task"),
        ({"assignment": "ASSIGN2", "submit": "https://evil.example"}, 403, "not opened by MTurk"),
        ({"assignment": "ASSIGN2", "worker": "bad id"}, 400, "workerId is not an MTurk id"),
        ({"assignment": "assign-2"}, 400, "assignmentId is not an MTurk id"),
        ({"assignment": "ASSIGN2", "worker": ""}, 400, "without MTurk&#x27;s workerId"),
    ],
)
def test_bad_entries_get_a_clear_page_and_change_nothing(client, campaign, params, status, message):
    _entered(client, campaign)  # ASSIGN1 belongs to AWORKER1
    publication = Publication.objects.get()
    response = client.get(entry_path(publication, **mturk_params(**params)))
    assert response.status_code == status
    assert message in response.content.decode()
    assert Assignment.objects.count() == 1
    # The error page shows inside MTurk's frame too.
    assert "https://www.mturk.com" in response["Content-Security-Policy"]


def test_a_tampered_entry_token_or_platform_is_refused(client, campaign):
    publication = make_mturk_publication(campaign)
    path = entry_path(publication, **mturk_params())
    assert client.get(path.replace("/join/mturk/", "/join/prolific/")).status_code == 404
    assert client.get(path.replace("/join/mturk/", "/join/mturk/x")).status_code == 403


def test_a_blocked_worker_cannot_enter(client, campaign):
    Worker.objects.create(platform=Platform.MTURK, external_id="AWORKER1", status="blocked")
    publication = make_mturk_publication(campaign)
    response = client.get(entry_path(publication, **mturk_params()))
    assert response.status_code == 403 and not Assignment.objects.exists()


def test_a_second_mturk_assignment_with_only_the_worker_id_takes_nothing_over(client, campaign):
    """Anyone can type a worker id into the URL: work never moves to another MTurk assignment.

    The attacker has a HIT of their own (ASSIGN2 on HIT2) and the victim's worker id.
    """
    make_mturk_publication(campaign, hit_ids=("HIT1", "HIT2"))
    victims, own = _entered(client, campaign)
    attacker = Client()
    path = entry_path(Publication.objects.get(), **mturk_params(assignment="ASSIGN2", hit="HIT2"))
    refused = attacker.get(path)
    assert refused.status_code == 409 and "Location" not in refused
    page = refused.content.decode()
    assert "This task is open in another session" in page and "another MTurk assignment" in page
    assert 'class="site-header worker-header"' in page  # the worker layout
    assert "ASSIGN1" not in page  # the bound assignment id is never shown
    assert "https://www.mturk.com" in refused["Content-Security-Policy"]  # shows in the frame
    victims.refresh_from_db()
    assert (victims.platform_assignment_id, victims.platform_task_id) == ("ASSIGN1", "HIT1")
    assert Assignment.objects.count() == 1
    # The victim's own session goes on: its pages, and MTurk re-opening the HIT.
    assert client.get(own["Location"]).status_code in (200, 302)
    again, reopened = _entered(client, campaign)
    assert again.id == victims.id and reopened["Location"] == own["Location"]


def test_after_the_first_assignment_ends_a_new_mturk_assignment_starts_afresh(client, campaign):
    """The worker returned the HIT and accepted another: once the first one has ended
    (its lease ran out, or a status sync saw it returned), the new one starts new work."""
    make_mturk_publication(campaign, hit_ids=("HIT1", "HIT2"))
    first, old = _entered(client, campaign)
    second_hit = mturk_params(assignment="ASSIGN2", hit="HIT2")
    assert client.get(entry_path(Publication.objects.get(), **second_hit)).status_code == 409
    assignment_return(assignment=first)
    second, new = _entered(client, campaign, assignment="ASSIGN2", hit="HIT2")
    assert second.id != first.id
    assert (second.platform_assignment_id, second.platform_task_id) == ("ASSIGN2", "HIT2")
    assert client.get(new["Location"]).status_code in (200, 302)
    ended = client.get(old["Location"])
    assert ended.status_code == 410 and b"You returned this assignment" in ended.content


# --- Completion ------------------------------------------------------------------------------


def test_the_done_page_posts_to_external_submit_after_everything_is_stored(client, campaign):
    assignment, _ = _entered(client, campaign)
    token = worker_token(assignment)
    done_url = reverse("worker-done", kwargs={"token": token})
    assert client.get(done_url).status_code == 302  # nothing to hand back before the end
    finish(assignment)
    response = client.get(done_url)
    page = response.content.decode()
    assert f'action="{SUBMIT_SANDBOX}/mturk/externalSubmit"' in page
    assert 'name="assignmentId" value="ASSIGN1"' in page
    assert f'name="completion_code" value="{assignment.completion_code}"' in page
    assert f"form-action 'self' {SUBMIT_SANDBOX}" in response["Content-Security-Policy"]


def test_the_live_environment_submits_to_mturk_itself(client, campaign, settings):
    make_mturk_publication(campaign, sandbox=False)
    assignment, _ = _entered(client, campaign, submit="https://www.mturk.com")
    finish(assignment)
    page = client.get(reverse("worker-done", kwargs={"token": worker_token(assignment)}))
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in page.content.decode()


def test_answer_fields_reads_mturks_answer_xml():
    assert answer_fields(answer_xml("ABC123"))["completion_code"] == "ABC123"
    assert answer_fields("not xml") == {} and answer_fields("") == {}


# --- Review -----------------------------------------------------------------------------------


@pytest.fixture
def submitted(client, campaign):
    assignment, _ = _entered(client, campaign)
    return finish(assignment)


def test_approve_verifies_the_assignment_with_mturk_first(submitted, mturk_stub):
    mturk_stub.add_response(
        "get_assignment", _remote(submitted), expected_params={"AssignmentId": "ASSIGN1"}
    )
    mturk_stub.add_response(
        "approve_assignment",
        {"ResponseMetadata": {"RequestId": "req-1", "HTTPStatusCode": 200}},
        expected_params={"AssignmentId": "ASSIGN1", "RequesterFeedback": "Thanks!"},
    )
    review.assignment_approve(assignment=submitted, feedback="Thanks!")
    assert submitted.review.decision == ReviewDecision.APPROVED
    action = PlatformAction.objects.get(action="approve")
    assert (action.outcome, action.request_id, action.worker_id) == (
        ActionOutcome.SUCCEEDED,
        "req-1",
        submitted.worker_id,
    )
    review.assignment_approve(assignment=submitted)  # already approved: no call at all
    assert PlatformAction.objects.filter(action="approve").count() == 1


@pytest.mark.parametrize(
    ("remote", "message"),
    [
        ({"worker": "AIMPOSTOR"}, "worker AIMPOSTOR's, not AWORKER1's"),
        ({"hit": "HITOTHER"}, "belongs to HIT HITOTHER"),
        ({"code": "WRONG"}, "does not carry this assignment's completion code"),
    ],
)
def test_approve_refuses_when_mturk_disagrees_and_pays_nothing(
    submitted, mturk_stub, remote, message
):
    mturk_stub.add_response("get_assignment", _remote(submitted, **remote))
    # No approve_assignment is queued: calling it would fail the test.
    with pytest.raises(NotVerified, match=message):
        review.assignment_approve(assignment=submitted)
    action = PlatformAction.objects.get(action="approve")
    assert action.outcome == ActionOutcome.FAILED
    assert action.error.startswith(("MTurk says", "The answer MTurk holds"))
    assert not AssignmentReview.objects.exists()


def test_approve_of_unfinished_work_is_refused_without_asking_mturk(client, campaign, mturk_stub):
    assignment, _ = _entered(client, campaign)
    with pytest.raises(Conflict, match="only submitted work can be approved"):
        review.assignment_approve(assignment=assignment)
    assert not PlatformAction.objects.exists()


def test_approve_overrides_an_earlier_rejection(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted, status="Rejected"))
    mturk_stub.add_response(
        "approve_assignment",
        {},
        expected_params={"AssignmentId": "ASSIGN1", "OverrideRejection": True},
    )
    review.assignment_approve(assignment=submitted)


def test_reject_sends_feedback_and_an_approval_cannot_be_undone(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_response(
        "reject_assignment",
        {},
        expected_params={"AssignmentId": "ASSIGN1", "RequesterFeedback": "Failed 4 of 6 checks."},
    )
    review.assignment_reject(assignment=submitted, feedback="Failed 4 of 6 checks.")
    assert Assignment.objects.get(pk=submitted.pk).review.decision == ReviewDecision.REJECTED
    with pytest.raises(InvalidInput, match="feedback is required"):
        review.assignment_reject(assignment=submitted, feedback="  ")


def test_reject_of_an_approved_assignment_is_a_conflict(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_response("approve_assignment", {})
    review.assignment_approve(assignment=submitted)
    with pytest.raises(Conflict, match="cannot be undone"):
        review.assignment_reject(assignment=submitted, feedback="Too late.")


def test_bonus_is_paid_once_per_unique_token(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted, status="Approved"))
    mturk_stub.add_response(
        "send_bonus",
        {"ResponseMetadata": {"RequestId": "bonus-req", "HTTPStatusCode": 200}},
        expected_params={
            "WorkerId": "AWORKER1",
            "BonusAmount": "0.75",
            "AssignmentId": "ASSIGN1",
            "Reason": "All gold rounds right.",
            "UniqueRequestToken": "qc-bonus-1",
        },
    )
    for _ in range(3):  # a double click, a retried job: one payment
        review.worker_bonus(
            assignment=submitted,
            amount=Decimal("0.75"),
            reason="All gold rounds right.",
            unique_token="qc-bonus-1",
        )
    action = PlatformAction.objects.get(action="bonus")
    assert (action.amount, action.request_token, action.outcome) == (
        Decimal("0.75"),
        "qc-bonus-1",
        ActionOutcome.SUCCEEDED,
    )


def test_a_bonus_retried_after_a_lost_answer_is_not_paid_twice(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_client_error(
        "send_bonus", service_error_code="ServiceFault", service_message="Timeout"
    )
    with pytest.raises(PlatformError, match="Timeout"):
        review.worker_bonus(
            assignment=submitted, amount=Decimal("1.00"), reason="Great work", unique_token="t-1"
        )
    # The first try went through after all: MTurk lists the payment, so nothing is sent.
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_response(
        "list_bonus_payments",
        {
            "BonusPayments": [
                {"WorkerId": "AWORKER1", "BonusAmount": "1.00", "AssignmentId": "ASSIGN1"}
            ]
        },
        expected_params={"AssignmentId": "ASSIGN1", "MaxResults": 100},
    )
    review.worker_bonus(
        assignment=submitted, amount=Decimal("1.00"), reason="Great work", unique_token="t-1"
    )
    outcomes = list(PlatformAction.objects.order_by("id").values_list("outcome", flat=True))
    assert outcomes == [ActionOutcome.FAILED, ActionOutcome.SUCCEEDED]


def test_a_bonus_retried_after_a_refusal_is_paid(submitted, mturk_stub):
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_client_error("send_bonus", service_message="Insufficient funds")
    with pytest.raises(PlatformError, match="Insufficient funds"):
        review.worker_bonus(
            assignment=submitted, amount=Decimal("1.00"), reason="Great", unique_token="t-2"
        )
    mturk_stub.add_response("get_assignment", _remote(submitted))
    mturk_stub.add_response("list_bonus_payments", {"BonusPayments": []})
    mturk_stub.add_response("send_bonus", {})
    review.worker_bonus(
        assignment=submitted, amount=Decimal("1.00"), reason="Great", unique_token="t-2"
    )


def test_block_blocks_on_mturk_and_here_and_frees_work_in_progress(client, campaign, mturk_stub):
    assignment, _ = _entered(client, campaign)
    mturk_stub.add_response(
        "create_worker_block",
        {},
        expected_params={"WorkerId": "AWORKER1", "Reason": "Random answers on gold rounds."},
    )
    review.worker_block(
        worker=assignment.worker,
        reason="Random answers on gold rounds.",
        scope=BlockScope.EVERYWHERE,
    )
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.RETURNED
    assert not LabelingUnit.objects.filter(claims__gt=0).exists()
    worker = Worker.objects.get(pk=assignment.worker_id)
    assert worker.status == WorkerStatus.BLOCKED and worker.blocked_reason.startswith("Random")
    # Done already: no second call.
    review.worker_block(worker=worker, reason="Again.", scope=BlockScope.EVERYWHERE)
    response = client.get(entry_path(Publication.objects.get(), **mturk_params(assignment="A9")))
    assert response.status_code == 403


def test_a_refused_block_still_blocks_here_and_says_so(submitted, mturk_stub):
    mturk_stub.add_client_error("create_worker_block", service_message="Worker unknown")
    with pytest.raises(PlatformError, match=r"Blocked here, but not on the platform: .*unknown"):
        review.worker_block(worker=submitted.worker, reason="Spam.", scope=BlockScope.EVERYWHERE)
    assert Worker.objects.get(pk=submitted.worker_id).status == WorkerStatus.BLOCKED


# --- Sync and failures ------------------------------------------------------------------------


def test_sync_updates_hit_counts_records_mturk_decisions_and_reports_strangers(
    submitted, mturk_stub
):
    mturk_stub.add_response(
        "get_hit",
        {
            "HIT": {
                "HITId": "HIT1",
                "HITStatus": "Reviewable",
                "NumberOfAssignmentsAvailable": 7,
                "NumberOfAssignmentsPending": 0,
                "NumberOfAssignmentsCompleted": 2,
                "Expiration": NOW,
            }
        },
        expected_params={"HITId": "HIT1"},
    )
    mturk_stub.add_response(
        "list_assignments_for_hit",
        {
            "Assignments": [
                {
                    "AssignmentId": "ASSIGN1",
                    "WorkerId": "AWORKER1",
                    "HITId": "HIT1",
                    "AssignmentStatus": "Approved",
                    "ApprovalTime": NOW,
                },
            ],
            "NextToken": "page-2",
        },
        expected_params={"HITId": "HIT1", "MaxResults": 100},
    )
    mturk_stub.add_response(
        "list_assignments_for_hit",
        {
            "Assignments": [
                {
                    "AssignmentId": "ASTRANGER",
                    "WorkerId": "AWHO",
                    "HITId": "HIT1",
                    "AssignmentStatus": "Submitted",
                },
            ]
        },
        expected_params={"HITId": "HIT1", "MaxResults": 100, "NextToken": "page-2"},
    )
    report = platform_sync(campaign=submitted.campaign)
    hit = MTurkHit.objects.get()
    assert (hit.status, hit.assignments_completed, hit.assignments_available) == (
        "Reviewable",
        2,
        7,
    )
    assert report.checked == 2 and report.reviews == 1
    assert Assignment.objects.get(pk=submitted.pk).review.decision == ReviewDecision.APPROVED
    assert any("ASTRANGER" in problem for problem in report.problems)
    sync = PlatformAction.objects.get(action="sync")
    assert sync.outcome == ActionOutcome.SUCCEEDED and "ASTRANGER" in str(sync.response)


class _Unreachable:
    def __getattr__(self, name):
        def fail(**params):
            raise EndpointConnectionError(endpoint_url="https://mturk-requester.example")

        return fail


def test_an_unreachable_mturk_is_one_clear_error(submitted, monkeypatch):
    monkeypatch.setattr(mturk, "mturk_client", lambda *, sandbox: _Unreachable())
    with pytest.raises(PlatformError, match="MTurk could not be reached for GetAssignment"):
        review.assignment_approve(assignment=submitted)
    report = platform_sync(campaign=submitted.campaign)
    assert report.problems == [
        "Amazon Mechanical Turk: MTurk could not be reached for GetHIT "
        "(EndpointConnectionError). Nothing was changed; try again later. What to fix: "
        "Check that this server can reach MTurk's requester endpoint over HTTPS "
        "(mturk-requester[-sandbox].us-east-1.amazonaws.com), then try again."
    ]


def test_missing_credentials_say_which_variables_to_set(submitted, monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(PlatformError, match="AWS_ACCESS_KEY_ID"):
        review.assignment_approve(assignment=submitted)


def test_review_of_an_assignment_that_never_came_from_a_hit_asks_nothing(campaign, mturk_stub):
    from tests.factories import make_assignment, make_worker

    assignment = make_assignment(
        campaign,
        worker=make_worker(Platform.MTURK),
        platform_assignment_id="AX",
        platform_task_id="NOHIT",
        state=AssignmentState.SUBMITTED,
        submitted_at=NOW,
    )
    with pytest.raises(NotVerified, match="did not come from one of this campaign's MTurk HITs"):
        review.assignment_approve(assignment=assignment)
    assert not PlatformAction.objects.filter(outcome=ActionOutcome.SUCCEEDED).exists()
