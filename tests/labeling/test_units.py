"""Units from selection: diverse candidates per original, grouped in rounds of three."""

import pytest

from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.labeling.models import LabelingUnit, UnitItem
from cfannotate.labeling.units import units_create_from_selection
from generation.relationship import Relationship
from tests.factories import make_candidate, make_original


def _candidate(original, text, removed, added, code="lexical", fluency=0.0, **kwargs):
    relationship = Relationship(
        base=str(original.pk),
        removed=frozenset(removed),
        added=frozenset(added),
        tree=frozenset({"dobj:NOUN"}),
        code=code,
    )
    return make_candidate(
        original,
        text=text,
        control_code=code,
        fluency_full=fluency,
        edit={"relationship": relationship.to_dict()},
        **kwargs,
    )


def test_each_original_gets_its_most_diverse_candidates(campaign):
    original = make_original(campaign, text="A man walks.")
    same = [_candidate(original, f"A woman walks {i}.", {"man"}, {"woman"}) for i in range(3)]
    different = _candidate(
        original,
        "Two people talk.",
        {"a", "man", "walks"},
        {"two", "people", "talk"},
        code="resemantic",
    )
    negated = _candidate(original, "A man does not walk.", set(), {"not"}, code="negation")
    _candidate(original, "Filtered.", {"man"}, {"dog"}, status=CandidateStatus.FILTERED)
    summary = units_create_from_selection(campaign=campaign)
    assert (summary.originals, summary.units, summary.candidates) == (1, 1, 3)
    unit = LabelingUnit.objects.get()
    chosen = set(unit.items.values_list("candidate_id", flat=True))
    assert {different.pk, negated.pk} <= chosen  # distinct relationships beat near-copies
    assert len(chosen & {c.pk for c in same}) == 1
    assert unit.judgments_needed == campaign.judgments_per_candidate
    assert set(Candidate.objects.filter(status="selected").values_list("pk", flat=True)) == chosen


def test_selection_is_idempotent_and_groups_by_round_size(campaign):
    campaign.selected_per_original = 5
    campaign.save()
    original = make_original(campaign)
    for i in range(6):
        _candidate(original, f"Variant {i}.", {f"w{i}"}, {f"v{i}"})
    first = units_create_from_selection(campaign=campaign)
    assert (first.units, first.candidates) == (2, 5)  # rounds of 3 and 2
    assert sorted(unit.items.count() for unit in LabelingUnit.objects.all()) == [2, 3]
    again = units_create_from_selection(campaign=campaign)
    assert (again.units, again.candidates) == (0, 0)
    assert UnitItem.objects.count() == 5


def test_nothing_to_select(campaign):
    assert units_create_from_selection(campaign=campaign).units == 0


def test_global_rewrites_are_never_selected(campaign):
    original = make_original(campaign)
    _candidate(original, "Something else entirely.", {"sentence"}, {"else"}, code="global")
    assert units_create_from_selection(campaign=campaign).units == 0


# ------------------------------------------------ a range of originals at a time


def _varied_pool(campaign, originals: int, seed: int = 7):
    """`originals` originals of six analysed candidates each, with stored predictions (as
    an upload leaves them), intended labels, fluency with gaps and ties, and distinct
    priorities; plus what selection must leave out: an original with a unit, a gold
    round's original, a generated `global` rewrite and a filtered candidate."""
    import random

    from cfannotate.campaigns.models import Campaign
    from tests.factories import make_gold_round, make_unit

    rng = random.Random(seed)
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier="uploaded", flip_weight=0.7, selected_per_original=4
    )
    campaign.refresh_from_db()
    labels = list(campaign.labels.all())
    words = ["good", "bad", "not", "great", "dull", "film", "plot", "very"]
    codes = ["lexical", "negation", "quantifier", "resemantic", "insert"]
    made = []
    for number in range(originals):
        original = make_original(campaign, label=rng.choice(labels).value)
        original.priority = rng.random()
        original.save()
        for index in range(6):
            predicted = rng.random() < 0.8
            _candidate(
                original,
                f"Variant {number}-{index}.",
                set(rng.sample(words, rng.randint(0, 2))),
                set(rng.sample(words, rng.randint(1, 2))),
                code=rng.choice(codes),
                fluency=rng.choice([None, -1.0, -0.5, 0.0, round(rng.random(), 3)]),
                predicted_label=rng.choice(labels) if predicted else None,
                predicted_confidence=round(rng.random(), 3) if predicted else None,
                prediction_source="uploaded" if predicted else "",
                intended_label=rng.choice([None, *labels]),
            )
        made.append(original)
    _candidate(made[0], "A global rewrite.", {"a"}, {"b"}, code="global")
    _candidate(made[0], "Filtered.", {"a"}, {"c"}, status=CandidateStatus.FILTERED)
    done = make_unit(make_original(campaign))
    _candidate(done.original, "Not again.", {"x"}, {"y"})
    gold = make_gold_round(campaign)
    _candidate(gold.original, "Gold stays out.", {"x"}, {"z"})
    return made


def _one_selection(campaign):
    """What one selection over the whole pool gives (the algorithm as it was before the
    pool was read a range of originals at a time): (original, candidate ids) per unit,
    in the order the units are created."""
    from cfannotate.candidates.predictions import selection_flip_weight
    from cfannotate.labeling.units import ROUND_SIZE, distance_weights
    from generation.label_classifiers import LabelPrediction, flip_scores
    from generation.selection import select_diverse_many

    done = LabelingUnit.objects.values("original_id")
    pool = list(
        Candidate.objects.filter(campaign=campaign, status=CandidateStatus.GENERATED)
        .exclude(original_id__in=done)
        .exclude(original__gold_rounds__isnull=False)
        .exclude(control_code="global", source="generated")
        .select_related("original__label", "predicted_label", "intended_label")
        .order_by("original_id", "id")
    )
    predictions = [
        LabelPrediction(c.predicted_label.value, c.predicted_confidence or 0.0)
        if c.predicted_label
        else None
        for c in pool
    ]
    chosen = select_diverse_many(
        [Relationship.from_dict(c.edit["relationship"]) for c in pool],
        campaign.selected_per_original,
        weights=distance_weights(campaign),
        fluency=[c.fluency_full if c.fluency_full is not None else 0.0 for c in pool],
        groups=[str(c.original_id) for c in pool],
        flip=flip_scores(
            predictions,
            [c.original.label.value for c in pool],
            [c.intended_label.value if c.intended_label else None for c in pool],
        ),
        flip_weight=selection_flip_weight(campaign),
    )
    units = []
    for indices in chosen.values():
        picked = [pool[index] for index in indices]
        for start in range(0, len(picked), ROUND_SIZE):
            group = picked[start : start + ROUND_SIZE]
            units.append((group[0].original_id, [c.pk for c in group]))
    return units


@pytest.mark.parametrize("ids_returned", [True, False], ids=["bulk-insert", "insert-each"])
def test_selection_a_range_of_originals_at_a_time_is_one_selection_over_the_pool(
    campaign, monkeypatch, ids_returned
):
    from django.db import connection

    from cfannotate.labeling import units as units_module

    # SQLite before 3.35 returns no ids from a bulk insert: the units are inserted one by one.
    features = type(connection.features)
    monkeypatch.setattr(features, "can_return_rows_from_bulk_insert", ids_returned)

    originals = _varied_pool(campaign, 7)
    before = set(LabelingUnit.objects.values_list("pk", flat=True))
    expected = _one_selection(campaign)
    assert len(expected) == 14  # 4 a original: a unit of 3 and one of 1

    monkeypatch.setattr(units_module, "ORIGINALS_PER_CHUNK", 3)  # ranges of 3, 3 and 1
    summary = units_create_from_selection(campaign=campaign)

    assert (summary.originals, summary.units, summary.candidates) == (7, 14, 28)
    made = LabelingUnit.objects.exclude(pk__in=before).order_by("id")
    got = [
        (
            unit.original_id,
            list(unit.items.order_by("position").values_list("candidate_id", flat=True)),
        )
        for unit in made
    ]
    assert got == expected
    priority = {o.pk: o.priority for o in originals}
    assert [(u.priority, u.judgments_needed) for u in made] == [
        (priority[u.original_id], campaign.judgments_per_candidate) for u in made
    ]
    selected = set(Candidate.objects.filter(status="selected").values_list("pk", flat=True))
    assert selected == {pk for _, pks in expected for pk in pks}


def test_building_units_takes_the_same_queries_for_any_number_of_originals(researcher):
    """Reads, predictions and writes go a range of originals at a time: the queries do not
    grow with the originals of one range (the baseline predicts here, so its training
    rows, check and the prediction writes are counted too)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import make_campaign

    def queries(originals: int) -> int:
        campaign = make_campaign(owner=researcher)
        for number in range(originals):
            original = make_original(
                campaign,
                text=f"A {'great' if number % 2 else 'dull'} film {number}.",
                label="positive" if number % 2 else "negative",
            )
            for index in range(4):
                _candidate(original, f"Edit {index} of {number}.", {f"w{index}"}, {f"v{number}"})
        with CaptureQueriesContext(connection) as captured:
            summary = units_create_from_selection(campaign=campaign)
        assert summary.originals == originals
        assert not Candidate.objects.filter(campaign=campaign, prediction_source="").exists()
        return len(captured.captured_queries)

    assert queries(4) == queries(12)
