import io
import json

import pytest
from django.core.management import CommandError, call_command

from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.gold import gold_rounds_import
from cfannotate.labeling.models import GoldItem, GoldKind, GoldRound, LabelingUnit
from cfannotate.labeling.units import units_create_from_selection
from tests.factories import make_campaign, make_original, make_unit

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
