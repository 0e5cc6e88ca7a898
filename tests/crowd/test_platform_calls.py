"""Every call to a platform finishes the action that logged it, never leaving it pending,
and an answer of a shape the provider did not expect is an error in words
(`cfannotate.crowd.platform_calls`)."""

import logging

import pytest
from django.urls import reverse

from cfannotate.core.exceptions import Conflict
from cfannotate.crowd.models import ActionKind, ActionOutcome, PlatformAction
from cfannotate.crowd.platform_calls import platform_call
from cfannotate.crowd.providers import PlatformError
from cfannotate.crowd.providers.base import ActionResult
from cfannotate.crowd.publishing import platform_sync
from cfannotate.crowd.services import platform_action_begin
from tests.crowd.conftest import make_prolific_publication

pytestmark = pytest.mark.django_db


def _action(campaign) -> PlatformAction:
    return platform_action_begin(platform="prolific", action=ActionKind.SYNC, campaign=campaign)


def _finished(action: PlatformAction) -> PlatformAction:
    action.refresh_from_db()
    assert action.finished_at is not None
    return action


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        (ActionResult(request_id="r-1", response={"ok": True}), ActionOutcome.SUCCEEDED),
        (ActionResult(request_id="r-1", response={"ok": True}, local_only=True), "local"),
    ],
)
def test_an_answer_finishes_the_action_with_what_the_platform_said(campaign, result, outcome):
    action = _action(campaign)

    with platform_call(action) as call:
        assert call.answered(result) is result

    action = _finished(action)
    assert (action.outcome, action.request_id, action.response) == (outcome, "r-1", {"ok": True})


def test_a_refusal_fails_the_action_with_its_message_and_goes_on(campaign):
    action = _action(campaign)

    with pytest.raises(Conflict, match="already approved"), platform_call(action):
        raise Conflict("The assignment is already approved.")

    action = _finished(action)
    assert (action.outcome, action.error) == (
        ActionOutcome.FAILED,
        "The assignment is already approved.",
    )


@pytest.mark.parametrize("error", [KeyError("HITId"), TypeError("list"), AttributeError("get")])
def test_an_answer_not_understood_is_a_platform_error_in_words(campaign, caplog, error):
    action = _action(campaign)

    with (
        caplog.at_level(logging.ERROR, logger="cfannotate.crowd.platform_calls"),
        pytest.raises(PlatformError) as raised,
        platform_call(action, fix="Sync again later."),
    ):
        raise error

    message = (
        f"Prolific answered in a way cfannotate did not expect ({type(error).__name__}); "
        "the server log has the details."
    )
    assert (raised.value.message, raised.value.fix) == (message, "Sync again later.")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    action = _finished(action)
    assert (action.outcome, action.error) == (ActionOutcome.FAILED, message)
    assert "prolific sync: the platform's answer was not understood" in caplog.text
    assert type(error).__name__ in caplog.text  # the trace is in the log


def test_any_other_error_fails_the_action_and_goes_on_unchanged(campaign):
    action = _action(campaign)

    with pytest.raises(RuntimeError, match="disk full"), platform_call(action):
        raise RuntimeError("disk full")

    action = _finished(action)
    assert action.outcome == ActionOutcome.FAILED
    assert action.error == "RuntimeError('disk full')"


def test_a_sync_answered_in_a_shape_not_expected_is_a_problem_in_the_report(campaign, prolific):
    """Over HTTP from the fake Prolific: a page of submissions that are not objects. Before,
    the sync stopped with an AttributeError and its action stayed pending."""
    study = make_prolific_publication(campaign)
    prolific.studies[study.external_id] = {"id": study.external_id, "status": "ACTIVE"}
    prolific.refuse["submissions"] = (200, {"results": ["not a submission"], "next": None})

    report = platform_sync(campaign=campaign)

    assert report.problems == [
        "Prolific: Prolific answered in a way cfannotate did not expect (AttributeError); "
        "the server log has the details. What to fix: Sync again later."
    ]
    action = PlatformAction.objects.get(action=ActionKind.SYNC)
    assert action.outcome == ActionOutcome.FAILED and action.finished_at is not None
    assert not PlatformAction.objects.filter(outcome=ActionOutcome.PENDING).exists()


def test_the_page_says_what_a_sync_did_not_understand(client, campaign, prolific):
    """The researcher's Sync button: the problem in words on the page, not a server error."""
    study = make_prolific_publication(campaign)
    prolific.studies[study.external_id] = {"id": study.external_id, "status": "ACTIVE"}
    prolific.refuse["submissions"] = (200, {"results": [["a", "list"]], "next": None})
    client.force_login(campaign.owner)

    response = client.post(
        reverse("crowd-sync", args=[campaign.id]), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    assert "Prolific answered in a way cfannotate did not expect (AttributeError)" in response.text
    assert "Sync again later." in response.text
