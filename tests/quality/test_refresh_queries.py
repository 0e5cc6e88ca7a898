"""`quality_refresh` at scale: set-based writes whose query count does not grow with the
campaign, and the same re-queues, replacements and decisions as the per-unit code had."""

import random
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cfannotate.labeling import assignments
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import AssignmentState, LabelingUnit, RoundKind
from cfannotate.labeling.rounds import Answer, round_serve, round_submit
from cfannotate.quality.decisions import decisions_propose
from cfannotate.quality.models import AggregatedLabel, DecisionAction, WorkerDecision
from cfannotate.quality.services import quality_refresh, units_requeue
from tests.factories import make_labeling_campaign, make_worker
from tests.quality.conftest import START, work

pytestmark = pytest.mark.django_db

# Both labels from every careful worker, so the label-distribution filter keeps them.
LABELS = ("negative", "positive")


def _crowd(groups: int):
    """`groups` times: two careful workers who disagree on four units (re-queued) and a
    guesser the filters remove (their units need a replacement judgment; their
    assignment is proposed for rejection and a block). Careful workers earn a bonus."""
    campaign = make_labeling_campaign(
        units=8 * groups,
        gold=2,
        training=0,
        rounds_per_assignment=4,
        gold_rounds_per_assignment=2,
        bonus_amount=Decimal("0.50"),
    )
    for _ in range(groups):
        work(campaign, real=lambda candidate_id: (True, LABELS[candidate_id % 2]))
        work(campaign, real=lambda candidate_id: (True, LABELS[1 - candidate_id % 2]))
        work(campaign, seconds=5, gold_right=2, real=lambda _: (True, "positive"))
    return campaign


def _writes(queries: CaptureQueriesContext) -> list[str]:
    tables = ('"labeling_labelingunit"', '"quality_workerdecision"')
    return [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].startswith(("UPDATE", "INSERT", "DELETE"))
        and any(table in query["sql"].split(" SET ")[0] for table in tables)
    ]


def test_a_refresh_makes_as_many_queries_for_a_crowd_three_times_larger():
    counts, written = [], []
    for groups in (1, 3):
        campaign = _crowd(groups)
        with CaptureQueriesContext(connection) as first:
            summary = quality_refresh(campaign=campaign)
        # Approve and bonus for each careful worker, reject and block for the guesser.
        assert summary.decisions_proposed == 6 * groups
        replaced = LabelingUnit.objects.filter(campaign=campaign, requeues=0, judgments_needed=3)
        written.append((summary.requeued_units, replaced.count()))
        with CaptureQueriesContext(connection) as again:
            summary = quality_refresh(campaign=campaign)
        assert (summary.requeued_units, summary.decisions_proposed) == (0, 0)
        # Nothing changes, so nothing is written: no UPDATE per unit held by a guesser.
        assert _writes(again) == []
        counts.append((len(first), len(again)))
    # The larger crowd re-queues and replaces more units, with the same queries.
    (small_requeued, small_replaced), (requeued, replaced) = written
    assert (small_requeued, small_replaced) == (4, 4)
    assert requeued > small_requeued and replaced > small_replaced, written
    assert counts[0] == counts[1], f"queries (first refresh, again): {counts}"


def _disputed(campaign, qualified_votes: list[int], *, requeues: int = 0):
    """A unit whose rounds are all in, its counterfactuals needing more with these votes."""
    unit = LabelingUnit.objects.filter(campaign=campaign, completed=0).order_by("id").first()
    needed = campaign.judgments_per_candidate + requeues
    LabelingUnit.objects.filter(id=unit.id).update(
        judgments_needed=needed, claims=needed, completed=needed, requeues=requeues
    )
    items = unit.items.order_by("position")
    for item, votes in zip(items, qualified_votes, strict=False):
        AggregatedLabel.objects.create(
            candidate_id=item.candidate_id,
            is_valid=True,
            kept=False,
            votes=votes,
            qualified_votes=votes,
            agreement=0.5 if votes else 0.0,
            needs_more=True,
        )
    return unit.id


def test_each_unit_gets_what_its_neediest_counterfactual_lacks_within_the_cap():
    campaign = make_labeling_campaign(units=6, gold=0, training=0, k=3, max_requeues=2)
    lacking_two = _disputed(campaign, [1, 3, 2])  # the neediest has 1 of 3: 2 more
    split = _disputed(campaign, [3, 3])  # enough votes, but split: 1 more
    capped = _disputed(campaign, [0], requeues=1)  # lacks 3, 1 left under the cap
    lacking_one = _disputed(campaign, [2])
    at_the_cap = _disputed(campaign, [1], requeues=2)
    with CaptureQueriesContext(connection) as queries:
        requeued = units_requeue(campaign=campaign)
    assert requeued == 4
    units = {
        unit_id: (needed, requeues)
        for unit_id, needed, requeues in LabelingUnit.objects.filter(campaign=campaign).values_list(
            "id", "judgments_needed", "requeues"
        )
    }
    assert units[lacking_two] == (5, 2)
    assert units[split] == (4, 1)
    assert units[capped] == (5, 2)
    assert units[lacking_one] == (4, 1)
    assert units[at_the_cap] == (5, 2)  # untouched
    # One read, the lock, one UPDATE per distinct change (three here), in a transaction.
    updates = [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) == 3
    assert units_requeue(campaign=campaign) == 0  # their new judgments are not in yet


def test_a_changed_proposal_is_updated_in_place_and_counted():
    campaign = _crowd(1)
    quality_refresh(campaign=campaign)
    bonuses = WorkerDecision.objects.filter(campaign=campaign, action=DecisionAction.BONUS)
    before = {decision.id: decision.updated_at for decision in bonuses}
    type(campaign).objects.filter(pk=campaign.pk).update(bonus_amount=Decimal("0.75"))
    campaign.refresh_from_db()
    assert decisions_propose(campaign=campaign) == 2
    for decision in bonuses.all():
        assert decision.amount == Decimal("0.75")
        assert decision.updated_at > before[decision.id]
    assert set(before) == set(bonuses.values_list("id", flat=True))
    assert decisions_propose(campaign=campaign) == 0


def test_a_stopped_worker_keeps_the_round_on_screen_and_later_refreshes_leave_it_be(
    monkeypatch,
):
    campaign = make_labeling_campaign(
        units=8, gold=2, training=0, rounds_per_assignment=6, gold_rounds_per_assignment=2
    )
    spammer = make_worker()
    assignment = assignment_start(
        campaign=campaign, worker=spammer, now=START, rng=random.Random(0)
    )
    rounds = list(assignment.rounds.order_by("position"))
    last_gold = max(r.position for r in rounds if r.kind == RoundKind.GOLD)
    now = START
    for round_ in rounds[: last_gold + 1]:  # fast, wrong on every gold one; then one shown
        view = round_serve(assignment=assignment, position=round_.position, now=now)
        if round_.position > last_gold:
            break
        now += timedelta(seconds=2)
        answers = [
            Answer(index=item.index, is_valid=False, label="negative") for item in view.items
        ]
        round_submit(assignment=assignment, position=round_.position, answers=answers, now=now)
    quality_refresh(campaign=campaign)
    on_screen = assignment.rounds.get(submitted_at__isnull=True)
    assert on_screen.position == last_gold + 1  # the rest were withdrawn
    finished = []
    finish_early = assignments.assignment_finish_early
    monkeypatch.setattr(
        assignments,
        "assignment_finish_early",
        lambda **kwargs: finished.append(kwargs) or finish_early(**kwargs),
    )
    quality_refresh(campaign=campaign)
    assert finished == []  # nothing left to withdraw: not locked again on every refresh
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.ACTIVE and assignment.ended_early
    view = round_serve(assignment=assignment, position=on_screen.position, now=now)
    answers = [Answer(index=item.index, is_valid=True, label="negative") for item in view.items]
    round_submit(assignment=assignment, position=on_screen.position, answers=answers, now=now)
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED
