"""The quality report's agreement figures: computed once per state of the labels, the
same figures as computing them from every judgment, and computed again when the
judgments or verdicts that quality control takes in change."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cfannotate.quality import selectors
from cfannotate.quality.selectors import filter_effects, quality_report
from cfannotate.quality.services import quality_after_assignment, quality_refresh
from tests.factories import make_labeling_campaign
from tests.quality.conftest import work

pytestmark = pytest.mark.django_db

LABELS = ("negative", "positive")


def _figures(report):
    return (report.label_agreement, report.label_agreement_qualified, report.validity_agreement)


def _computed_now(campaign, report):
    """The figures as the report computed them before they were kept: from every judgment."""
    qualified = {row.quality.worker_id for row in report.workers if row.quality.qualified}
    return selectors._agreements(campaign, qualified)


@pytest.fixture
def computations(monkeypatch):
    """How many times the figures were computed from the judgments."""
    calls = []
    compute = selectors._agreements

    def counted(campaign, qualified):
        calls.append(campaign.id)
        return compute(campaign, qualified)

    monkeypatch.setattr(selectors, "_agreements", counted)
    return calls


@pytest.fixture
def campaign(db):
    campaign = make_labeling_campaign(
        units=12, gold=2, training=0, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    work(campaign, real=lambda candidate_id: (True, LABELS[candidate_id % 2]))
    work(
        campaign,
        gold_right=5,  # not every gold right: the time rule applies to this one
        real=lambda candidate_id: (candidate_id % 3 > 0, LABELS[candidate_id % 3 % 2]),
    )
    return campaign


def test_a_refresh_computes_the_figures_once_and_every_page_load_reuses_them(
    campaign, computations
):
    quality_refresh(campaign=campaign)
    assert len(computations) == 1
    first = quality_report(campaign)
    second = quality_report(campaign)
    assert len(computations) == 1  # neither load read every judgment
    assert _figures(first) == _figures(second) == _computed_now(campaign, first)
    assert first.label_agreement.items == 12  # every counterfactual judged twice


def test_the_reports_queries_do_not_include_the_judgments_once_kept(campaign):
    quality_refresh(campaign=campaign)
    with CaptureQueriesContext(connection) as queries:
        quality_report(campaign)
    ordered_judgments = [
        query["sql"]
        for query in queries.captured_queries
        if 'FROM "labeling_judgment"' in query["sql"] and "ORDER BY" in query["sql"]
    ]
    assert ordered_judgments == []


def test_new_judgments_are_in_the_figures_once_quality_control_takes_them_in(
    campaign, computations
):
    quality_refresh(campaign=campaign)
    before = _figures(quality_report(campaign))
    _, assignment = work(campaign, real=lambda _: (True, "positive"))
    # The assignment's task re-votes its units: the labels change, so do the figures.
    quality_after_assignment(assignment_id=assignment.id)
    report = quality_report(campaign)
    assert len(computations) == 2
    assert _figures(report) == _computed_now(campaign, report)
    assert _figures(report) != before
    assert report.label_agreement.basis.judgments > before[0].basis.judgments


def test_a_changed_verdict_changes_the_qualified_workers_figures(campaign, computations):
    quality_refresh(campaign=campaign)
    assert quality_report(campaign).summary.qualified == 2
    # The second worker's labels stop counting once their 30 s a round is too fast.
    type(campaign).objects.filter(pk=campaign.pk).update(min_median_seconds=40)
    campaign.refresh_from_db()
    quality_refresh(campaign=campaign)
    report = quality_report(campaign)
    assert report.summary.qualified == 1
    assert len(computations) == 2
    assert _figures(report) == _computed_now(campaign, report)
    assert report.label_agreement_qualified.items == 0


def test_each_campaign_keeps_its_own_figures(campaign, computations):
    other = make_labeling_campaign(
        units=4, gold=2, training=0, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    work(other, real=lambda _: (True, "negative"))
    work(other, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    quality_refresh(campaign=other)
    mine, theirs = quality_report(campaign), quality_report(other)
    assert len(computations) == 2
    assert _figures(mine) == _computed_now(campaign, mine)
    assert _figures(theirs) == _computed_now(other, theirs)
    assert theirs.label_agreement.raw == 1.0 != mine.label_agreement.raw


def test_where_the_counterfactuals_stand_decided_waiting_or_capped(db):
    campaign = make_labeling_campaign(
        units=4,
        gold=2,
        training=0,
        rounds_per_assignment=4,
        gold_rounds_per_assignment=2,
        max_requeues=1,
        agreement_threshold=1.0,  # unanimity: two votes to one still disagree
    )
    work(campaign, real=lambda _: (True, "negative"))
    work(campaign, real=lambda _: (True, "positive"))
    quality_refresh(campaign=campaign)  # every unit re-queued, up to the cap of one
    effects = filter_effects(campaign)
    assert (effects.decided, effects.waiting, effects.capped) == (0, 12, 0)
    work(campaign, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    effects = filter_effects(campaign)
    assert (effects.decided, effects.waiting, effects.capped) == (0, 0, 12)
