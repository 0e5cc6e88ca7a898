"""`manage.py import_candidates`: imports and selects, or prints one clear line."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cfannotate.campaigns.models import Original
from cfannotate.candidates.models import Candidate
from cfannotate.labeling.models import LabelingUnit
from tests.factories import make_campaign


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher, name="Reviews")
    Original.objects.create(
        campaign=campaign,
        external_id="s01",
        text="It is great for kids.",
        label=campaign.labels.get(value="positive"),
    )
    return campaign


def test_import_candidates_imports_and_selects_units(campaign, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        '{"original_id": "s01", "text": "It is not great for kids.", "label": "negative"}\n'
        '{"original_id": "s01", "text": "It is great for adults."}\n'
    )
    out = StringIO()
    call_command("import_candidates", campaign.id, str(path), stdout=out)
    assert out.getvalue().strip() == (
        "Imported 2 candidates for 1 original into Reviews (2 fluent); 1 labeling unit selected."
    )
    assert Candidate.objects.filter(source="imported", status="selected").count() == 2
    assert LabelingUnit.objects.filter(campaign=campaign).count() == 1


def test_import_candidates_prints_one_line_on_error(campaign, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes(b"original_id,text\ns01,It is great for kids.\ns02,Caf\xe9.\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_candidates", campaign.id, str(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("The file is not UTF-8 text: line 3 has the byte 0xE9")
    assert "line 3: Byte 0xE9 ('é' in Windows-1252) at character 8" in message
    path.write_bytes(b"original_id,text\ns01,It is great for kids.\n")
    with pytest.raises(CommandError, match="row 2: text: The same as the original"):
        call_command("import_candidates", campaign.id, str(path))
    assert not Candidate.objects.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["424242", "x.csv"], "No campaign with id 424242."),
        (["{campaign}", "/no/such/file.csv"], "No file at /no/such/file.csv."),
    ],
)
def test_import_candidates_reports_a_missing_campaign_or_file(campaign, args, message):
    args = [arg.format(campaign=campaign.id) for arg in args]
    with pytest.raises(CommandError, match=message):
        call_command("import_candidates", *args)


@pytest.mark.parametrize(
    "device, message",
    [
        ("tpu", "Unknown device 'tpu': use 'auto', 'cpu', 'cuda' or 'cuda:N'."),
        ("cuda:99", "Device 'cuda:99' asked for, but"),
    ],
)
def test_generate_refuses_a_device_before_it_starts_a_run(campaign, device, message):
    from cfannotate.candidates.models import GenerationRun

    with pytest.raises(CommandError) as caught:
        call_command("generate", campaign.id, "--device", device)
    assert str(caught.value).startswith(message)
    assert not GenerationRun.objects.filter(campaign=campaign).exists()
