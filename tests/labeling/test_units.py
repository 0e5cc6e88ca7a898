"""Units from selection: diverse candidates per original, grouped in rounds of three."""

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
