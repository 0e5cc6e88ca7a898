"""Review services: accept, reject, edit, bulk review, promote to gold, gold round authoring."""

import pytest

from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.candidates.review import (
    candidate_accept,
    candidate_edit,
    candidate_reject,
    candidates_review,
)
from cfannotate.core.exceptions import Conflict, InvalidInput, NotFound
from cfannotate.labeling.gold import (
    gold_round_author,
    gold_round_deactivate,
    gold_round_update,
)
from cfannotate.labeling.models import (
    GoldItem,
    GoldKind,
    GoldRound,
    Judgment,
    LabelingUnit,
    Round,
    RoundKind,
    UnitItem,
)
from cfannotate.labeling.promotion import candidates_promote_to_gold
from cfannotate.labeling.units import units_create_from_selection
from tests.factories import (
    make_assignment,
    make_campaign,
    make_candidate,
    make_original,
    make_unit,
)
from tests.labeling.conftest import assignment  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return make_campaign()


@pytest.fixture
def original(campaign):
    return make_original(campaign, text="It is great for kids.", label="positive")


def _claim(unit):
    """A worker is given the unit: a real round of an assignment holds it."""
    holder = make_assignment(unit.campaign)
    Round.objects.create(
        assignment=holder, worker=holder.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    LabelingUnit.objects.filter(pk=unit.pk).update(claims=1)
    return holder


def _items(unit):
    return list(unit.items.order_by("position").values_list("candidate_id", flat=True))


# --------------------------------------------------------------------------- accept


def test_accept_starts_a_unit_for_an_original_without_one(original):
    candidate = make_candidate(original, status=CandidateStatus.FILTERED)
    candidate_accept(candidate=candidate)
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.SELECTED
    unit = LabelingUnit.objects.get(original=original)
    assert _items(unit) == [candidate.id]
    assert unit.judgments_needed == original.campaign.judgments_per_candidate


def test_accept_joins_an_unclaimed_unit_with_room_then_starts_another(original):
    unit = make_unit(original, candidates=2)
    first = make_candidate(original, status=CandidateStatus.REJECTED)
    second = make_candidate(original)
    candidate_accept(candidate=first)
    assert _items(unit)[-1] == first.id and unit.items.count() == 3
    candidate_accept(candidate=second)  # the unit is full now
    assert LabelingUnit.objects.filter(original=original).count() == 2
    assert UnitItem.objects.get(candidate=second).unit != unit


def test_accept_never_changes_a_unit_a_worker_was_given(original):
    unit = make_unit(original, candidates=2)
    _claim(unit)
    candidate = make_candidate(original)
    candidate_accept(candidate=candidate)
    assert unit.items.count() == 2
    assert UnitItem.objects.get(candidate=candidate).unit != unit


def test_accept_is_harmless_twice_and_refused_for_gold(campaign, original):
    unit = make_unit(original, candidates=1)
    selected = unit.items.get().candidate
    assert candidate_accept(candidate=selected).pk == selected.pk
    assert unit.items.count() == 1

    gold_original = make_original(campaign)
    gold_round_author(
        campaign=campaign,
        original=gold_original,
        kind=GoldKind.GOLD,
        items=[{"text": "It was awful.", "valid": True, "label": "negative"}],
    )
    gold_candidate = gold_original.candidates.get()
    with pytest.raises(Conflict, match="item of a gold round"):
        candidate_accept(candidate=gold_candidate)
    other = make_candidate(gold_original)
    with pytest.raises(Conflict, match="original has a gold round"):
        candidate_accept(candidate=other)
    assert not LabelingUnit.objects.filter(original=gold_original).exists()


# --------------------------------------------------------------------------- reject


def test_reject_takes_a_candidate_out_of_its_unclaimed_unit(original):
    unit = make_unit(original, candidates=2)
    first, second = (item.candidate for item in unit.items.all())
    candidate_reject(candidate=first)
    assert _items(unit) == [second.id]
    first.refresh_from_db()
    assert first.status == CandidateStatus.REJECTED
    candidate_reject(candidate=second)  # the last one: the empty unit goes
    assert not LabelingUnit.objects.filter(pk=unit.pk).exists()
    # Accepted again, it is back in a unit.
    candidate_accept(candidate=first)
    first.refresh_from_db()
    assert first.status == CandidateStatus.SELECTED and hasattr(first, "unit_item")


def test_reject_is_refused_once_a_worker_has_the_unit_or_judged_it(original):
    unit = make_unit(original, candidates=2)
    first, second = (item.candidate for item in unit.items.all())
    holder = _claim(unit)
    with pytest.raises(Conflict, match="already given this candidate's labeling unit"):
        candidate_reject(candidate=first)
    Judgment.objects.create(round=holder.rounds.get(), candidate=second)
    with pytest.raises(Conflict, match=r"already judged this candidate \(1 judgment"):
        candidate_reject(candidate=second)
    assert unit.items.count() == 2
    assert set(Candidate.objects.values_list("status", flat=True)) == {CandidateStatus.GENERATED}


def test_reject_is_refused_for_gold_items(campaign):
    gold_original = make_original(campaign)
    gold_round = gold_round_author(
        campaign=campaign,
        original=gold_original,
        kind=GoldKind.TRAINING,
        items=[{"text": "Nope.", "valid": False, "label": "negative"}],
    )
    with pytest.raises(Conflict, match="Deactivate the round"):
        candidate_reject(candidate=gold_round.items.get().candidate)


# --------------------------------------------------------------------------- edit


def test_edit_reannotates_like_an_import_and_forgets_fluency(original):
    candidate = make_candidate(
        original,
        text="It is great for adults.",
        status=CandidateStatus.FILTERED,
        fluency_full=-12.0,
        fluency_changed=-11.0,
        control_code="lexical",
    )
    candidate_edit(candidate=candidate, text="  It is not great for kids. ")
    candidate.refresh_from_db()
    assert candidate.text == "It is not great for kids."
    assert candidate.control_code == "negation"
    assert candidate.edit["relationship"]["code"] == "negation"
    assert "not" in " ".join(candidate.edit["relationship"]["added"])
    assert candidate.fluency_full is None and candidate.fluency_changed is None
    assert candidate.status == CandidateStatus.GENERATED  # the filter judged the old text
    assert candidate.metadata["edited_from"] == ["It is great for adults."]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "Empty."),
        ("It is  great for ADULTS.", "Unchanged"),
        ("it is great for kids.", "The same as the original"),
        ("It is awful for kids.", "Already a candidate of this original"),
        ("x" * 10_001, "the limit is 10,000"),
    ],
)
def test_edit_refuses_bad_texts(original, text, message):
    make_candidate(original, text="It is awful for kids.")
    candidate = make_candidate(original, text="It is great for adults.")
    with pytest.raises(InvalidInput) as raised:
        candidate_edit(candidate=candidate, text=text)
    assert message in raised.value.fields["text"][0]
    candidate.refresh_from_db()
    assert candidate.text == "It is great for adults."


def test_edit_is_refused_once_a_worker_has_the_candidate(original):
    unit = make_unit(original, candidates=1)
    _claim(unit)
    candidate = unit.items.get().candidate
    with pytest.raises(Conflict, match="cannot be edited"):
        candidate_edit(candidate=candidate, text="Something else entirely.")


# --------------------------------------------------------------------------- bulk


def test_bulk_review_is_all_or_nothing_with_a_reason_per_id(campaign, original):
    free = [make_candidate(original) for _ in range(2)]
    claimed_unit = make_unit(make_original(campaign), candidates=1)
    _claim(claimed_unit)
    claimed = claimed_unit.items.get().candidate
    foreign = make_candidate(make_original(make_campaign()))

    with pytest.raises(InvalidInput) as raised:
        candidates_review(
            campaign=campaign,
            accept=[free[0].id, foreign.id],
            reject=[free[1].id, claimed.id],
        )
    fields = raised.value.fields
    assert set(fields) == {f"accept.{foreign.id}", f"reject.{claimed.id}"}
    assert "No candidate" in fields[f"accept.{foreign.id}"][0]
    assert "already given" in fields[f"reject.{claimed.id}"][0]
    assert not UnitItem.objects.filter(candidate__in=free).exists()
    assert set(
        Candidate.objects.filter(pk__in=[c.pk for c in free]).values_list("status", flat=True)
    ) == {CandidateStatus.GENERATED}

    summary = candidates_review(campaign=campaign, accept=[free[0].id], reject=[free[1].id])
    assert (summary.accepted, summary.rejected) == (1, 1)
    assert Candidate.objects.get(pk=free[1].pk).status == CandidateStatus.REJECTED


def test_bulk_review_refuses_nonsense(campaign, original):
    candidate = make_candidate(original)
    with pytest.raises(InvalidInput, match="Choose candidates"):
        candidates_review(campaign=campaign)
    with pytest.raises(InvalidInput) as raised:
        candidates_review(campaign=campaign, accept=[candidate.id], reject=[candidate.id])
    assert raised.value.fields == {
        f"reject.{candidate.id}": ["Both accepted and rejected; choose one."]
    }
    with pytest.raises(InvalidInput, match="list of candidate ids"):
        candidates_review(campaign=campaign, accept=["1"])
    assert not UnitItem.objects.exists()


# --------------------------------------------------------------------------- promote


def test_promote_removes_unclaimed_units_and_makes_a_gold_round(campaign, original):
    unit = make_unit(original, candidates=3)
    in_unit = [item.candidate for item in unit.items.all()]
    outside = make_candidate(original, status=CandidateStatus.FILTERED)
    gold_round = candidates_promote_to_gold(
        campaign=campaign,
        original=original,
        kind=GoldKind.TRAINING,
        items=[
            {"candidate_id": in_unit[0].id, "valid": True, "label": "negative"},
            {
                "candidate_id": outside.id,
                "valid": "false",
                "label": "Positive",
                "explanation": "Word salad.",
            },
        ],
    )
    assert gold_round.kind == GoldKind.TRAINING and gold_round.is_active
    items = list(gold_round.items.order_by("position"))
    assert [(i.candidate_id, i.expected_valid, i.expected_label.value) for i in items] == [
        (in_unit[0].id, True, "negative"),
        (outside.id, False, "positive"),
    ]
    assert items[1].explanation == "Word salad."
    assert not LabelingUnit.objects.filter(original=original).exists()
    statuses = dict(Candidate.objects.filter(original=original).values_list("id", "status"))
    assert statuses[in_unit[0].id] == statuses[outside.id] == CandidateStatus.GOLD
    assert statuses[in_unit[1].id] == statuses[in_unit[2].id] == CandidateStatus.GENERATED
    # The original of a gold round stays out of selection from now on.
    assert units_create_from_selection(campaign=campaign).units == 0


def test_promote_is_refused_when_a_worker_has_a_unit_of_the_original(campaign, original):
    claimed = make_unit(original, candidates=1)
    _claim(claimed)
    free = make_unit(original, candidates=1)
    candidate = free.items.get().candidate
    with pytest.raises(Conflict, match="already given a labeling unit of this original"):
        candidates_promote_to_gold(
            campaign=campaign,
            original=original,
            items=[{"candidate_id": candidate.id, "valid": True, "label": "negative"}],
        )
    assert LabelingUnit.objects.filter(original=original).count() == 2
    assert not GoldRound.objects.exists()


def test_promote_reports_every_bad_item_and_changes_nothing(campaign, original):
    unit = make_unit(original, candidates=2)
    first = unit.items.first().candidate
    stranger = make_candidate(make_original(campaign))
    with pytest.raises(InvalidInput) as raised:
        candidates_promote_to_gold(
            campaign=campaign,
            original=original,
            kind="secret",
            items=[
                {"candidate_id": first.id, "valid": "perhaps", "label": "meh"},
                {"candidate_id": first.id, "valid": True, "label": "negative"},
                {"candidate_id": stranger.id, "valid": True, "label": "negative"},
                "nonsense",
            ],
        )
    fields = raised.value.fields
    assert fields["kind"] == ["Use gold or training."]
    assert fields["items[1].valid"] == ["Use true or false."]
    assert "Unknown label 'meh'" in fields["items[1].label"][0]
    assert fields["items[2].candidate_id"] == ["Given twice in this round."]
    assert "of this original" in fields["items[3].candidate_id"][0]
    assert "items[4]" in fields
    assert unit.items.count() == 2 and not GoldRound.objects.exists()
    with pytest.raises(NotFound):
        candidates_promote_to_gold(
            campaign=make_campaign(), original=original, items=[{"candidate_id": first.id}]
        )


# --------------------------------------------------------------------------- gold authoring


def test_author_a_gold_round_and_its_rules(campaign, original):
    gold_round = gold_round_author(
        campaign=campaign,
        original=original,
        kind="gold",
        items=[
            {"text": "It is awful for kids.", "valid": True, "label": "negative"},
            {"text": "It great kids for is.", "valid": False, "label": "positive"},
        ],
    )
    candidates = [item.candidate for item in gold_round.items.order_by("position")]
    assert [c.source for c in candidates] == [CandidateSource.AUTHORED] * 2
    assert {c.status for c in candidates} == {CandidateStatus.GOLD}

    given_out = make_original(campaign)
    LabelingUnit.objects.filter(pk=make_unit(given_out).pk).update(claims=1)
    with pytest.raises(InvalidInput) as raised:
        gold_round_author(
            campaign=campaign,
            original=given_out,
            kind="gold",
            items=[{"text": given_out.text, "label": "negative"}, {"text": "", "label": "x"}],
        )
    fields = raised.value.fields
    assert "Workers were already given" in fields["original"][0]
    assert fields["items[1].text"] == ["The same as the original."]
    assert fields["items[2].text"] == ["The text is empty."]
    assert "Unknown label 'x'" in fields["items[2].label"][0]
    with pytest.raises(InvalidInput) as raised:
        gold_round_author(
            campaign=campaign, original=make_original(campaign), kind="gold", items=[]
        )
    assert raised.value.fields == {"items": ["Give 1 to 3 items."]}
    assert GoldRound.objects.count() == 1


def test_answers_change_until_a_worker_is_given_the_round(assignment):  # noqa: F811
    gold_round = assignment.rounds.get(kind=RoundKind.GOLD).gold_round
    unseen = GoldRound.objects.filter(campaign=assignment.campaign).exclude(rounds__isnull=False)
    assert not unseen.exists()  # the fixture gives every round to the worker
    fresh = gold_round_author(
        campaign=assignment.campaign,
        original=make_original(assignment.campaign),
        kind="gold",
        items=[{"text": "Fresh text.", "valid": True, "label": "negative"}],
    )
    item = fresh.items.get()
    gold_round_update(
        gold_round=fresh,
        items=[{"id": item.id, "valid": False, "label": "positive", "explanation": "Why."}],
    )
    item.refresh_from_db()
    assert (item.expected_valid, item.expected_label.value, item.explanation) == (
        False,
        "positive",
        "Why.",
    )
    with pytest.raises(InvalidInput) as raised:
        gold_round_update(
            gold_round=fresh,
            items=[{"id": 999_999, "label": "positive"}, {"id": item.id, "label": "?"}],
        )
    assert set(raised.value.fields) == {"items[1].id", "items[2].label"}

    seen_item = gold_round.items.first()
    with pytest.raises(Conflict, match="already given this round"):
        gold_round_update(
            gold_round=gold_round, items=[{"id": seen_item.id, "valid": True, "label": "positive"}]
        )
    with pytest.raises(Conflict, match="already given this round"):
        candidate_edit(candidate=seen_item.candidate, text="A brand new text.")
    assert GoldItem.objects.get(pk=seen_item.pk).expected_label == seen_item.expected_label
    # Switching it off (and on) stays possible: it only concerns new assignments.
    assert gold_round_deactivate(gold_round=gold_round).is_active is False
    assert gold_round_update(gold_round=gold_round, is_active=True).is_active is True
