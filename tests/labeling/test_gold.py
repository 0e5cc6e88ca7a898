import io
import json

import pytest
from django.core.management import CommandError, call_command

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.gold import gold_rounds_import
from cfannotate.labeling.models import GoldItem, GoldKind, GoldRound, LabelingUnit
from cfannotate.labeling.promotion import candidates_promote_to_gold
from cfannotate.labeling.selectors import gold_size_note
from cfannotate.labeling.services import labeling_open
from cfannotate.labeling.units import units_create_from_selection
from tests.factories import make_campaign, make_candidate, make_original, make_unit

pytestmark = pytest.mark.django_db


def _record(original, **overrides):
    record = {
        "original_id": original.external_id,
        "kind": "gold",
        "items": [
            {"text": "It was awful.", "valid": True, "label": "negative"},
            {"text": "It was wonderful!", "valid": "true", "label": "Positive"},
            {
                "text": "Was it it wonderful.",
                "valid": False,
                "label": "positive",
                "explanation": "Broken word order.",
            },
        ],
    }
    return {**record, **overrides}


def test_gold_rounds_are_imported_with_their_answers():
    campaign = make_campaign()
    first, second = make_original(campaign), make_original(campaign)
    count = gold_rounds_import(
        campaign=campaign, records=[_record(first), _record(second, kind="training")]
    )
    assert count == 2
    assert set(GoldRound.objects.values_list("kind", flat=True)) == {"gold", "training"}
    items = GoldItem.objects.filter(gold_round__original=first).order_by("position")
    assert [(i.expected_valid, i.expected_label.value) for i in items] == [
        (True, "negative"),
        (True, "positive"),
        (False, "positive"),
    ]
    assert items[2].explanation == "Broken word order."
    assert {i.candidate.status for i in items} == {CandidateStatus.GOLD}


def test_every_bad_row_is_reported_and_nothing_is_imported():
    campaign = make_campaign()
    original = make_original(campaign)
    given_out = make_original(campaign)
    LabelingUnit.objects.filter(pk=make_unit(given_out).pk).update(claims=1)
    records = [
        _record(original),
        _record(original, original_id="missing"),
        _record(original, kind="secret"),
        _record(original, items=[]),
        _record(original, items=[{"text": "", "valid": "perhaps", "label": "meh"}]),
        _record(given_out),
        "not an object",
    ]
    with pytest.raises(InvalidInput) as raised:
        gold_rounds_import(campaign=campaign, records=records)
    fields = raised.value.fields
    assert set(fields) == {f"row {n}" for n in range(2, 8)}
    assert any("Unknown label" in message for message in fields["row 5"])
    assert any("Workers were already given" in message for message in fields["row 6"])
    assert not GoldRound.objects.exists()


@pytest.mark.parametrize("text", [["It was awful."], {"text": "It was awful."}, True, 5])
def test_an_item_text_that_is_not_a_string_is_refused(text):
    campaign = make_campaign()
    original = make_original(campaign)
    record = _record(original, items=[{"text": text, "valid": True, "label": "negative"}])
    with pytest.raises(InvalidInput) as raised:
        gold_rounds_import(campaign=campaign, records=[record])
    assert raised.value.fields == {
        "row 1": [
            "items[1].text: Give the text as a string in quotes, not a list, an object, "
            "a number or true/false."
        ]
    }
    assert not Candidate.objects.exists()


def test_two_rows_giving_one_original_the_same_text_are_both_named():
    campaign = make_campaign()
    first, second = make_original(campaign), make_original(campaign)
    records = [
        _record(first),
        _record(second),  # the same texts on another original: other candidates
        _record(first, kind="training", items=[_record(first)["items"][1]]),
        _record(first, original_id="missing"),
    ]
    with pytest.raises(InvalidInput) as raised:
        gold_rounds_import(campaign=campaign, records=records)
    fields = raised.value.fields
    assert set(fields) == {"row 3", "row 4"}
    assert fields["row 3"] == [
        "items[1].text: The same text as row 1 for the same original; "
        "each counterfactual can be in one round only."
    ]
    assert not GoldRound.objects.exists()


def test_an_import_takes_originals_out_of_units_no_worker_was_given():
    campaign = make_campaign()
    original = make_original(campaign)
    freed = [item.candidate for item in make_unit(original).items.all()]
    assert gold_rounds_import(campaign=campaign, records=[_record(original)]) == 1
    assert not LabelingUnit.objects.filter(original=original).exists()
    assert {Candidate.objects.get(pk=c.pk).status for c in freed} == {CandidateStatus.GENERATED}


def test_gold_originals_stay_out_of_real_units():
    campaign = make_campaign()
    original = make_original(campaign)
    gold_rounds_import(campaign=campaign, records=[_record(original, kind=GoldKind.GOLD)])
    assert units_create_from_selection(campaign=campaign).units == 0


def test_the_command_imports_and_reports_errors_in_one_line(tmp_path):
    campaign = make_campaign()
    original = make_original(campaign)
    good = tmp_path / "gold.jsonl"
    good.write_text(json.dumps(_record(original)) + "\n", encoding="utf-8")
    out = io.StringIO()
    call_command("import_gold", str(campaign.id), str(good), stdout=out)
    assert "Imported 1 round into" in out.getvalue()

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"original_id": "nope", "items": []}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="row 1: original_id: No original 'nope'"):
        call_command("import_gold", str(campaign.id), str(bad))
    with pytest.raises(CommandError, match="No campaign with id 999999"):
        call_command("import_gold", "999999", str(bad))
    with pytest.raises(CommandError, match="No file at"):
        call_command("import_gold", str(campaign.id), str(tmp_path / "missing.jsonl"))


def test_the_command_names_the_byte_of_a_file_that_is_not_utf8(tmp_path):
    campaign = make_campaign()
    original = make_original(campaign)
    latin1 = tmp_path / "gold.jsonl"
    record = _record(original)
    record["items"][0]["explanation"] = "Le mot « bien » devient « mal »."
    latin1.write_bytes(json.dumps(record, ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_gold", str(campaign.id), str(latin1))
    message = str(caught.value)
    assert message.startswith("The file is not UTF-8 text: line 1 has the byte 0xAB")
    assert "encoding='utf-8'" in message and "\n" not in message
    assert not GoldRound.objects.exists()


def _campaign_selecting(count):
    campaign = make_campaign()
    Campaign.objects.filter(pk=campaign.pk).update(selected_per_original=count)
    campaign.refresh_from_db()
    return campaign


def _items(count):
    return [
        {"text": f"It was awful, part {n}.", "valid": True, "label": "negative"}
        for n in range(1, count + 1)
    ]


def test_a_hidden_gold_round_holds_no_more_than_a_unit():
    """A round shows "Edited version 1 of 4": a gold round longer than every labeling unit
    would tell workers it is gold. Training rounds say what they are and may be longer."""
    campaign = make_campaign()  # 3 selected per original
    original, other = make_original(campaign), make_original(campaign)
    with pytest.raises(InvalidInput) as raised:
        gold_rounds_import(campaign=campaign, records=[_record(original, items=_items(4))])
    (message,) = raised.value.fields["row 1"]
    assert message.startswith("items: A hidden gold round holds at most 3 counterfactuals here")
    assert "this one has 4" in message
    assert not GoldRound.objects.exists()

    records = [_record(original, items=_items(3)), _record(other, kind="training", items=_items(4))]
    assert gold_rounds_import(campaign=campaign, records=records) == 2
    third = make_original(campaign)
    with pytest.raises(InvalidInput) as raised:
        gold_rounds_import(
            campaign=campaign, records=[_record(third, kind="training", items=_items(11))]
        )
    assert raised.value.fields["row 1"] == ["items: Give 1 to 10 items."]


def test_promoting_more_candidates_than_a_unit_holds_is_refused():
    campaign = _campaign_selecting(2)
    original = make_original(campaign)
    candidates = [make_candidate(original) for _ in range(3)]
    items = [{"candidate_id": c.pk, "valid": True, "label": "negative"} for c in candidates]
    with pytest.raises(InvalidInput) as raised:
        candidates_promote_to_gold(campaign=campaign, original=original, items=items)
    assert "at most 2 counterfactuals" in raised.value.fields["items"][0]
    assert not GoldRound.objects.exists()
    assert (
        candidates_promote_to_gold(
            campaign=campaign, original=original, items=items[:2]
        ).items.count()
        == 2
    )


def test_gold_rounds_a_worker_can_tell_by_their_size_are_named():
    campaign = make_campaign()
    for _ in range(2):
        make_unit(make_original(campaign), candidates=3)
    assert gold_size_note(campaign) == ""
    gold_rounds_import(
        campaign=campaign,
        records=[
            _record(make_original(campaign)),
            _record(make_original(campaign), items=_items(2)),
            _record(make_original(campaign), kind="training", items=_items(5)),
        ],
    )
    assert gold_size_note(campaign) == (
        "1 hidden gold round of 2 holds 2 counterfactuals, and labeling units hold 3: a worker "
        "who counts the edited versions can tell it is gold. Give it as many counterfactuals "
        "as a unit, or switch it off."
    )
    assert gold_size_note(campaign) in labeling_open(campaign=campaign)

    # Units of two exist too (an original with fewer selected candidates): two is no tell.
    make_unit(make_original(campaign), candidates=2)
    assert gold_size_note(campaign) == ""


def test_before_units_exist_a_unit_is_as_long_as_the_selection():
    campaign = _campaign_selecting(2)
    gold_rounds_import(
        campaign=campaign, records=[_record(make_original(campaign), items=_items(2))]
    )
    assert gold_size_note(campaign) == ""
    Campaign.objects.filter(pk=campaign.pk).update(selected_per_original=4)
    campaign.refresh_from_db()
    gold_rounds_import(
        campaign=campaign, records=[_record(make_original(campaign), items=_items(1))]
    )
    assert gold_size_note(campaign).startswith(
        "2 hidden gold rounds of 2 hold 1 or 2 counterfactuals, and labeling units hold 4: "
        "a worker who counts the edited versions can tell they are gold."
    )
