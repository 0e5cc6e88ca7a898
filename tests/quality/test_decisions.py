"""Worker decisions: proposals from the filters, the researcher's changes, sending them."""

from decimal import Decimal

import pytest

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.crowd.models import BlockScope, WorkerBlock, WorkerStatus
from cfannotate.quality.decisions import (
    decision_apply,
    decision_update,
    decisions_apply,
    decisions_confirm_proposed,
    decisions_propose,
)
from cfannotate.quality.models import DecisionAction, DecisionState, WorkerDecision
from cfannotate.quality.services import quality_refresh
from tests.factories import make_labeling_campaign
from tests.quality.conftest import work


@pytest.fixture
def crowd(db):
    """A careful worker, a guesser (2 of 6 gold right) and a slow reader (5 of 6 at 15 s)."""
    campaign = make_labeling_campaign(
        units=10, gold=2, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    careful, _ = work(campaign, seconds=30, gold_right=6)
    guesser, _ = work(campaign, seconds=25, gold_right=2)
    slow_reader, _ = work(campaign, seconds=15, gold_right=5)
    quality_refresh(campaign=campaign)
    return campaign, careful, guesser, slow_reader


def actions_of(campaign, worker) -> set[str]:
    return set(
        WorkerDecision.objects.filter(campaign=campaign, worker=worker).values_list(
            "action", flat=True
        )
    )


def test_proposals_follow_the_filters(crowd):
    campaign, careful, guesser, slow_reader = crowd
    assert actions_of(campaign, careful) == {DecisionAction.APPROVE}
    assert actions_of(campaign, guesser) == {DecisionAction.REJECT, DecisionAction.BLOCK}
    # Filtered out, but honest: paid, labels unused.
    assert actions_of(campaign, slow_reader) == {DecisionAction.APPROVE}
    reason = WorkerDecision.objects.get(worker=slow_reader).reason
    assert reason.startswith("Paid; labels not used (median 15.0 s")
    rejection = WorkerDecision.objects.get(worker=guesser, action=DecisionAction.REJECT)
    assert "2 of 6 gold counterfactuals right" in rejection.reason
    assert WorkerDecision.objects.filter(state=DecisionState.PROPOSED).count() == 4


def test_a_bonus_is_proposed_for_perfect_gold_when_the_campaign_offers_one(crowd):
    campaign, careful, *_ = crowd
    Campaign.objects.filter(pk=campaign.pk).update(bonus_amount=Decimal("0.50"))
    campaign.refresh_from_db()
    decisions_propose(campaign=campaign)
    bonus = WorkerDecision.objects.get(action=DecisionAction.BONUS)
    assert bonus.worker == careful and bonus.amount == Decimal("0.50")
    # Withdrawn again when the campaign stops offering it (it was never touched).
    Campaign.objects.filter(pk=campaign.pk).update(bonus_amount=0)
    campaign.refresh_from_db()
    decisions_propose(campaign=campaign)
    assert not WorkerDecision.objects.filter(action=DecisionAction.BONUS).exists()


def test_proposing_twice_changes_nothing(crowd):
    campaign, *_ = crowd
    assert decisions_propose(campaign=campaign) == 0
    assert WorkerDecision.objects.count() == 4


def test_the_filters_never_undo_a_researchers_change(crowd, researcher):
    campaign, _, guesser, _ = crowd
    rejection = WorkerDecision.objects.get(worker=guesser, action=DecisionAction.REJECT)
    decision_update(
        decision=rejection,
        user=researcher,
        state=DecisionState.CONFIRMED,
        action=DecisionAction.APPROVE,
        reason="First assignment: we pay and explain the gold rounds.",
    )
    quality_refresh(campaign=campaign)
    rejection.refresh_from_db()
    assert rejection.action == DecisionAction.APPROVE
    assert not rejection.proposed_by_filters and rejection.decided_by == researcher


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"state": "applied"}, "state"),
        ({"state": "confirmed", "action": "bonus"}, "action"),
        ({"state": "confirmed", "reason": "  "}, "reason"),
    ],
)
def test_bad_changes_are_refused_with_the_field(crowd, researcher, change, field):
    _campaign, careful, *_ = crowd
    decision = WorkerDecision.objects.get(worker=careful)
    with pytest.raises(InvalidInput) as error:
        decision_update(decision=decision, user=researcher, **change)
    assert field in error.value.fields
    decision.refresh_from_db()
    assert decision.state == DecisionState.PROPOSED


def test_turning_an_approval_into_a_rejection_needs_a_reason_of_its_own(crowd, researcher):
    _, careful, *_ = crowd
    decision = WorkerDecision.objects.get(worker=careful)
    with pytest.raises(InvalidInput) as error:
        decision_update(decision=decision, user=researcher, state="confirmed", action="reject")
    assert "reason" in error.value.fields


def test_a_bonus_needs_a_positive_amount(crowd, researcher):
    campaign, _careful, *_ = crowd
    Campaign.objects.filter(pk=campaign.pk).update(bonus_amount=Decimal("1.00"))
    campaign.refresh_from_db()
    decisions_propose(campaign=campaign)
    bonus = WorkerDecision.objects.get(action=DecisionAction.BONUS)
    with pytest.raises(InvalidInput) as error:
        decision_update(decision=bonus, user=researcher, state="confirmed", amount=Decimal(0))
    assert "amount" in error.value.fields
    decision_update(decision=bonus, user=researcher, state="confirmed", amount=Decimal("2.5"))
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("2.50")


@pytest.mark.parametrize(
    "amount",
    ["NaN", "sNaN", "Infinity", "-Infinity", "1e400", "99999999999", "1000000", "0.001", "-1"],
)
def test_a_bonus_amount_must_fit_the_field_in_whole_cents(crowd, researcher, amount):
    """The API and the commands call the service too: it refuses what the field cannot hold
    (and what it would round to nothing) instead of storing a row the pages cannot read."""
    campaign, *_ = crowd
    Campaign.objects.filter(pk=campaign.pk).update(bonus_amount=Decimal("1.00"))
    campaign.refresh_from_db()
    decisions_propose(campaign=campaign)
    bonus = WorkerDecision.objects.get(action=DecisionAction.BONUS)
    with pytest.raises(InvalidInput) as error:
        decision_update(decision=bonus, user=researcher, state="confirmed", amount=Decimal(amount))
    assert list(error.value.fields) == ["amount"]
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("1.00") and bonus.state == DecisionState.PROPOSED
    decision_update(decision=bonus, user=researcher, state="confirmed", amount=Decimal("999999.99"))
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("999999.99")


def test_confirmed_decisions_are_sent_once(crowd, researcher):
    campaign, _, guesser, _ = crowd
    assert decisions_confirm_proposed(campaign=campaign, user=researcher) == 4
    applied, failed = decisions_apply(campaign=campaign)
    assert (applied, failed) == (4, 0)
    assert set(WorkerDecision.objects.values_list("state", flat=True)) == {DecisionState.APPLIED}
    # The researcher's block keeps the guesser out of their campaigns, not the site's.
    guesser.refresh_from_db()
    assert guesser.status == WorkerStatus.ACTIVE
    block = WorkerBlock.objects.get(worker=guesser)
    assert (block.scope, block.researcher_id) == (BlockScope.RESEARCHER, campaign.owner_id)
    # Sent decisions are final.
    decision = WorkerDecision.objects.first()
    with pytest.raises(Conflict):
        decision_apply(decision=decision)
    with pytest.raises(Conflict):
        decision_update(decision=decision, user=researcher, state="dismissed")
    assert decisions_apply(campaign=campaign) == (0, 0)


def test_a_proposal_is_not_sent_before_it_is_confirmed(crowd):
    campaign, *_ = crowd
    with pytest.raises(Conflict):
        decision_apply(decision=WorkerDecision.objects.first())
    assert decisions_apply(campaign=campaign) == (0, 0)


def test_a_platform_refusal_is_recorded_and_can_be_retried(crowd, researcher, monkeypatch):
    from cfannotate.core.exceptions import CfannotateError
    from cfannotate.crowd import review

    _campaign, careful, *_ = crowd
    decision = WorkerDecision.objects.get(worker=careful)
    decision_update(decision=decision, user=researcher, state="confirmed")

    def refuse(**kwargs):
        raise CfannotateError("The platform is unreachable: connection refused.")

    monkeypatch.setattr(review, "assignment_approve", refuse)
    decision = decision_apply(decision=decision)
    assert decision.state == DecisionState.FAILED
    assert decision.error == "The platform is unreachable: connection refused."
    monkeypatch.undo()
    assert decision_apply(decision=decision).state == DecisionState.APPLIED
