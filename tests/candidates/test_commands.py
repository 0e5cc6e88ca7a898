"""`manage.py import_candidates`: imports and selects, or prints one clear line."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cfannotate.campaigns.models import Original
from cfannotate.candidates.models import Candidate
from cfannotate.labeling.models import LabelingUnit
from tests.factories import make_campaign, make_original


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


@pytest.fixture
def three_originals(campaign):
    for text in ("The film is a good movie.", "What a lovely song."):
        make_original(campaign, text=text, label="positive")
    return campaign


def _chunk_states(run) -> list[str]:
    return list(run.chunks.order_by("index").values_list("state", flat=True))


def test_generate_ends_its_run_when_the_inference_server_fails(
    three_originals, monkeypatch, caplog
):
    from cfannotate.candidates.models import ChunkState, GenerationRun, RunState
    from generation.engines.server import InferenceServerError

    down = "The inference server at http://127.0.0.1:1/v1 could not be reached: refused."

    def server_down(**kwargs):
        raise InferenceServerError(down)

    monkeypatch.setattr("cfannotate.candidates.services.candidates_generate", server_down)
    with pytest.raises(CommandError) as caught:
        call_command(
            "generate",
            three_originals.id,
            "--chunk-size",
            "1",
            "--device",
            "cpu",
            stdout=StringIO(),
        )
    run = GenerationRun.objects.get(campaign=three_originals)
    assert str(caught.value) == f"{down} (run {run.pk} cancelled.)"
    assert run.state == RunState.CANCELLED
    assert _chunk_states(run) == [ChunkState.FAILED, ChunkState.CANCELLED, ChunkState.CANCELLED]
    # The failed chunk's log line is one line too: the command says what failed.
    logged = [r for r in caplog.records if r.name == "cfannotate.candidates.runs"]
    assert [(r.getMessage(), r.exc_info) for r in logged] == [
        (f"chunk 0 of run {run.pk} failed", None)
    ]
    # Nothing is left in progress: the campaign can be generated again.
    with pytest.raises(CommandError, match="could not be reached"):
        call_command("generate", three_originals.id, "--chunk-size", "1", "--device", "cpu")
    assert GenerationRun.objects.filter(campaign=three_originals).count() == 2
    assert not GenerationRun.objects.exclude(state=RunState.CANCELLED).exists()


def test_generate_interrupted_cancels_its_run_and_fails(three_originals, monkeypatch):
    from cfannotate.candidates.models import ChunkState, GenerationRun, RunState

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cfannotate.candidates.services.candidates_generate", interrupted)
    with pytest.raises(CommandError) as caught:
        call_command("generate", three_originals.id, "--chunk-size", "1", "--device", "cpu")
    run = GenerationRun.objects.get(campaign=three_originals)
    assert str(caught.value) == f"Interrupted: run {run.pk} cancelled."
    assert caught.value.returncode == 130
    assert run.state == RunState.CANCELLED
    # The chunk being generated is not left running until its lease ends.
    assert _chunk_states(run) == [ChunkState.CANCELLED] * 3


def test_generate_ends_its_run_on_an_unexpected_error_too(three_originals, monkeypatch):
    from cfannotate.candidates.models import GenerationRun, RunState

    def lost(**kwargs):
        raise RuntimeError("CUDA error: device lost")

    monkeypatch.setattr("cfannotate.candidates.services.candidates_generate", lost)
    with pytest.raises(CommandError) as caught:
        call_command("generate", three_originals.id, "--chunk-size", "2", "--device", "cpu")
    run = GenerationRun.objects.get(campaign=three_originals)
    assert str(caught.value) == (
        f"Generation failed: RuntimeError: CUDA error: device lost (run {run.pk} cancelled.)"
    )
    assert run.state == RunState.CANCELLED


@pytest.mark.parametrize(
    "args, message",
    [
        (["--chunk-size", "0"], "--chunk-size must be at least 1."),
        (["--not-generated"], "Empty has no originals to generate for: upload some first."),
        ([], "Empty has no originals to generate for: upload some first."),
    ],
)
def test_generate_names_the_option_and_what_is_missing(researcher, args, message):
    from cfannotate.candidates.models import GenerationRun

    empty = make_campaign(owner=researcher, name="Empty")
    if args[:1] == ["--chunk-size"]:
        make_original(empty, text="It is great for kids.", label="positive")
    with pytest.raises(CommandError) as caught:
        call_command("generate", empty.id, "--device", "cpu", *args)
    assert str(caught.value) == message
    assert not GenerationRun.objects.exists()
