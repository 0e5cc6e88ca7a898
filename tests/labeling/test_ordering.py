"""Corpus-level selection in the web app: the most diverse originals under a budget first."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling import ordering
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import LabelingUnit
from cfannotate.labeling.ordering import BUDGET_PRIORITY_BASE, units_order_by_budget
from tests.factories import make_labeling_campaign, make_worker

EDITS = {  # per original: the edits of its three selected counterfactuals
    "animals": [("cat", "dog", "lexical"), ("cat", "horse", "lexical"), ("", "big", "insert")],
    "animals again": [
        ("cat", "dog", "lexical"),
        ("cat", "horse", "lexical"),
        ("", "big", "insert"),
    ],
    "negations": [
        ("", "not", "negation"),
        ("always", "never", "negation"),
        ("a", "two", "quantifier"),
    ],
}


def relationship(base, removed, added, code):
    return {
        "base": base,
        "removed": [removed] if removed else [],
        "added": [added],
        "tree": [f"amod:{code}"],
        "code": code,
    }


@pytest.fixture
def ordered_campaign(researcher):
    campaign = make_labeling_campaign(units=3, gold=0, training=0, rounds_per_assignment=1)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    units = list(LabelingUnit.objects.filter(campaign=campaign).order_by("id"))
    for unit, edits in zip(units, EDITS.values(), strict=True):
        for item, edit in zip(unit.items.order_by("position"), edits, strict=True):
            item.candidate.edit = {"relationship": relationship("ignored", *edit)}
            item.candidate.save(update_fields=["edit"])
    return campaign, dict(zip(EDITS, units, strict=True))


def test_a_budget_of_two_skips_the_near_duplicate_original(ordered_campaign):
    campaign, units = ordered_campaign
    summary = units_order_by_budget(campaign=campaign, budget=2)
    assert (summary.originals, summary.units, summary.candidates_considered) == (2, 2, 9)
    first = {name for name, unit in units.items() if _priority(unit) >= BUDGET_PRIORITY_BASE}
    assert "negations" in first and len(first & {"animals", "animals again"}) == 1
    # The claiming order follows: a worker with one round gets a chosen unit.
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    claimed = assignment.rounds.get(kind="real").unit
    assert claimed.priority >= BUDGET_PRIORITY_BASE


def test_a_new_budget_replaces_the_old_order(ordered_campaign):
    campaign, units = ordered_campaign
    units_order_by_budget(campaign=campaign, budget=3)
    assert all(_priority(unit) >= BUDGET_PRIORITY_BASE for unit in units.values())
    units_order_by_budget(campaign=campaign, budget=1)
    assert sum(_priority(unit) >= BUDGET_PRIORITY_BASE for unit in units.values()) == 1


@pytest.mark.parametrize("budget", [0, -3, "2", True, 2.5])
def test_a_budget_must_be_a_positive_whole_number(ordered_campaign, budget):
    campaign, _ = ordered_campaign
    with pytest.raises(InvalidInput) as error:
        units_order_by_budget(campaign=campaign, budget=budget)
    assert "budget" in error.value.fields


def test_units_without_analysed_candidates_cannot_be_ordered(db):
    campaign = make_labeling_campaign(units=2, gold=0)
    with pytest.raises(InvalidInput, match="No open unit has analysed counterfactuals"):
        units_order_by_budget(campaign=campaign, budget=1)


def test_the_campaign_page_orders_by_budget(client, researcher, ordered_campaign):
    campaign, _ = ordered_campaign
    client.force_login(researcher)
    page = client.get(reverse("campaign-labeling", args=[campaign.id])).content.decode()
    assert 'id="labeling-order"' in page
    url = reverse("labeling-order", args=[campaign.id])
    response = client.post(url, {"budget": "2"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert (
        "The 2 most diverse of the open originals (budget 2) come first"
        in response.content.decode()
    )
    bad = client.post(url, {"budget": "many"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 400 and "whole number" in bad.content.decode()


@pytest.mark.parametrize("budget", ["\u0662", "\u00b2"])  # Arabic-Indic 2, superscript 2
def test_a_budget_in_other_digits_is_refused_in_words(client, researcher, ordered_campaign, budget):
    """str.isdigit() is true for both: int() read the first as 2 and failed on the second."""
    campaign, _ = ordered_campaign
    client.force_login(researcher)
    url = reverse("labeling-order", args=[campaign.id])
    response = client.post(url, {"budget": budget}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "whole number" in response.content.decode()


def test_the_baseline_priority_button_reports_what_it_could_not_do(client, researcher, db):
    campaign = make_labeling_campaign(units=1, gold=0)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    client.force_login(researcher)
    response = client.post(reverse("labeling-priority", args=[campaign.id]))
    assert response.status_code == 400
    assert "baseline cannot be trained" in response.content.decode()


def test_ordering_is_for_the_owner_only(client, other_researcher, ordered_campaign):
    campaign, _ = ordered_campaign
    client.force_login(other_researcher)
    assert (
        client.post(reverse("labeling-order", args=[campaign.id]), {"budget": 1}).status_code == 404
    )
    assert client.post(reverse("labeling-priority", args=[campaign.id])).status_code == 404


def test_ordering_takes_as_many_queries_for_a_larger_campaign(db):
    counts = []
    for size in (3, 12):
        campaign = make_labeling_campaign(units=size, gold=0, training=0)
        codes = ("lexical", "insert", "negation")
        for number, unit in enumerate(LabelingUnit.objects.filter(campaign=campaign)):
            for item in unit.items.all():
                edit = (f"w{number % 4}", f"v{item.position}", codes[number % 3])
                item.candidate.edit = {"relationship": relationship("ignored", *edit)}
                item.candidate.save(update_fields=["edit"])
        with CaptureQueriesContext(connection) as queries:
            summary = units_order_by_budget(campaign=campaign, budget=size)
        assert (summary.originals, summary.units) == (size, size)
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]


def test_the_order_written_in_batches_is_the_same(ordered_campaign, monkeypatch):
    campaign, units = ordered_campaign
    units_order_by_budget(campaign=campaign, budget=3)
    whole = {name: _priority(unit) for name, unit in units.items()}
    assert sorted(whole.values()) == [BUDGET_PRIORITY_BASE + rank for rank in (1, 2, 3)]
    LabelingUnit.objects.filter(campaign=campaign).update(priority=0.0)
    monkeypatch.setattr(ordering, "_RANK_BATCH", 2)
    with CaptureQueriesContext(connection) as queries:
        assert units_order_by_budget(campaign=campaign, budget=3).units == 3
    updates = [query for query in queries.captured_queries if query["sql"].startswith("UPDATE")]
    assert len(updates) == 1 + 2  # the reset, then two batches of ranks
    assert {name: _priority(unit) for name, unit in units.items()} == whole


def _priority(unit) -> float:
    unit.refresh_from_db()
    return unit.priority
