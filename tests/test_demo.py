from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from cfannotate.campaigns.models import Campaign


def test_demo_setup_is_idempotent_and_prints_a_working_login(db):
    out = StringIO()
    call_command("demo_setup", generate=0, stdout=out)
    call_command("demo_setup", generate=0, stdout=(second := StringIO()))
    assert Campaign.objects.count() == 3  # two to generate, one labeled example
    counts = sorted(c.originals.count() for c in Campaign.objects.all())
    assert counts == [20, 40, 40]
    line = next(line for line in second.getvalue().splitlines() if "Log in:" in line)
    username, password = line.split(" as ")[1].split(" / ")
    assert authenticate(username=username.strip(), password=password.strip()) is not None
    assert "/api/schema/" in out.getvalue()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"base_url": "notaurl", "generate": 0},
            "--base-url must be an http:// or https:// address such as "
            "https://labels.example.org, not 'notaurl'.",
        ),
        ({"generate": -5}, "--generate takes 0 (skip) or more originals, not -5."),
    ],
)
def test_demo_setup_refuses_bad_options_before_it_makes_anything(db, options, message):
    with pytest.raises(CommandError) as caught:
        call_command("demo_setup", stdout=StringIO(), **options)
    assert str(caught.value) == message
    assert not Campaign.objects.exists()


def test_the_demo_campaigns_come_with_gold_and_training_rounds_and_open_for_labeling(db):
    from cfannotate.campaigns.models import CampaignStatus
    from cfannotate.demo.setup import demo_generate, demo_setup
    from cfannotate.labeling.models import GoldKind
    from tests.factories import make_unit

    setup = demo_setup()
    for campaign in setup.campaigns:
        kinds = sorted(campaign.gold_rounds.values_list("kind", flat=True))
        assert kinds == [GoldKind.GOLD] * 3 + [GoldKind.TRAINING]
        # Units exist (as if generated): the demo opens the campaign for labeling
        # without generating again.
        original = campaign.originals.exclude(gold_rounds__isnull=False).first()
        make_unit(original)
        original.candidates.update(source="generated")
    lines = demo_generate(setup.campaigns, originals_per_campaign=1)
    assert any("generated candidates already" in line for line in lines)
    for campaign in setup.campaigns:
        campaign.refresh_from_db()
        assert campaign.status == CampaignStatus.LABELING
    out = StringIO()
    call_command("demo_setup", generate=0, stdout=out)
    assert out.getvalue().count("/join/") == 2


def test_the_labeled_example_shows_real_quality_and_export_data(db, client):
    """Simulated workers labeled it through the real services: the C.2 filter caught the
    spammers, votes kept counterfactuals, and the contrast set holds label flips."""
    from cfannotate.demo.setup import EXAMPLE_NAME, demo_setup
    from cfannotate.exports.selectors import contrast_rows
    from cfannotate.labeling.models import Judgment
    from cfannotate.quality.models import AggregatedLabel, WorkerQuality

    setup = demo_setup()
    example = setup.example
    assert example.name == EXAMPLE_NAME
    assert Judgment.objects.filter(round__assignment__campaign=example).count() > 60
    verdicts = dict(
        WorkerQuality.objects.filter(campaign=example).values_list(
            "worker__external_id", "qualified"
        )
    )
    assert verdicts["demo-fast-2"] is False and verdicts["demo-constant-5"] is False
    careful = [qualified for worker, qualified in verdicts.items() if "careful" in worker]
    assert len(careful) >= 4 and all(careful)
    kept = AggregatedLabel.objects.filter(candidate__campaign=example, kept=True)
    assert kept.count() >= 15
    contrast = list(contrast_rows(example))
    assert contrast and all(row["label"] != row["original_label"] for row in contrast)

    demo_setup()  # again: the example is not built twice
    assert Campaign.objects.filter(name=EXAMPLE_NAME).count() == 1

    client.force_login(type(example.owner).objects.get(pk=example.owner_id))  # new password
    response = client.get(f"/campaigns/{example.id}/quality/")
    assert response.status_code == 200, response
    page = response.content.decode()
    assert "demo-fast-2" in page


class _FakeGeneration:
    """Stands in for `candidates_generate`: no model, a fake clock that each batch moves on
    by `seconds`, and an error on the call numbered `fail_on`."""

    def __init__(self, *, seconds=10.0, fail_on=None):
        self.now, self.seconds, self.fail_on, self.batches = 0.0, seconds, fail_on, []
        self.options: list[dict] = []

    def clock(self):
        return self.now

    def __call__(self, *, campaign, originals, **kwargs):
        from cfannotate.candidates.services import GenerationSummary
        from cfannotate.core.exceptions import InvalidInput

        self.batches.append((campaign.name, len(originals)))
        self.options.append(kwargs)
        if len(self.batches) == self.fail_on:
            raise InvalidInput("The generator's model is missing.")
        self.now += self.seconds
        return GenerationSummary(
            originals=len(originals), stored=0, kept=0, already_known=0, generators=(),
            seconds={"total": self.seconds},
        )  # fmt: skip


def _fake_generation(monkeypatch, **kwargs):
    from cfannotate.candidates import services
    from cfannotate.demo import setup as demo

    fake = _FakeGeneration(**kwargs)
    monkeypatch.setattr(services, "candidates_generate", fake)
    monkeypatch.setattr(demo, "candidates_generate", fake, raising=False)
    return fake


def test_demo_generation_tells_originals_done_and_time_left_as_it_goes(db, monkeypatch):
    from cfannotate.demo.setup import demo_generate, demo_setup

    fake = _fake_generation(monkeypatch, seconds=10.0)
    setup = demo_setup()
    heard = []
    demo_generate(
        setup.campaigns,
        originals_per_campaign=2,
        on_progress=heard.append,
        clock=fake.clock,
    )
    assert [size for _, size in fake.batches] == [1, 1, 1, 1]  # few originals: one a batch
    # These lines are the progress: no generator draws a bar of its own between them.
    assert not any(options.get("show_progress") for options in fake.options)
    assert [(p.done, p.total) for p in heard] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    assert heard[0].seconds_left is None and "loading the model" in heard[0].line()
    first = setup.campaigns[0].name
    assert heard[1].line() == f"1/4 originals done ({first}); about 30 s left."
    assert heard[3].campaign == setup.campaigns[1].name
    assert heard[-1].line().endswith("finished in 40 s.")


def test_large_runs_go_in_about_ten_batches_a_campaign(db, monkeypatch):
    from cfannotate.demo.setup import (
        PROGRESS_STEPS,
        GenerationProgress,
        demo_generate,
        demo_setup,
    )

    fake = _fake_generation(monkeypatch)
    campaign = demo_setup().campaigns[0]
    heard: list[GenerationProgress] = []
    demo_generate([campaign], originals_per_campaign=30,
                  on_progress=heard.append, clock=fake.clock)  # fmt: skip
    available = campaign.originals.exclude(gold_rounds__isnull=False).count()
    total = min(30, available)
    assert sum(size for _, size in fake.batches) == total
    assert len(fake.batches) <= PROGRESS_STEPS + 1 and heard[-1].done == total
    # 90 s and more are said in minutes.
    said = GenerationProgress("c", 1, 3, 100.0).line()
    assert said == "1/3 originals done (c); about 3 min left."


def test_the_demo_command_prints_progress_lines_and_a_failure_in_one_line(db, monkeypatch):
    import pytest
    from django.core.management.base import CommandError

    _fake_generation(monkeypatch)
    out = StringIO()
    call_command("demo_setup", generate=1, stdout=out)
    printed = out.getvalue()
    assert "0/2 originals done" in printed and "2/2 originals done" in printed
    assert printed.index("1/2 originals done") < printed.index("Demo ready.")
    assert printed.count("Generating candidates for 1 original per campaign") == 1

    # The fake stored nothing, so the next run generates again; this time it fails.
    _fake_generation(monkeypatch, fail_on=2)
    out = StringIO()
    with pytest.raises(CommandError, match=r"The generator's model is missing\."):
        call_command("demo_setup", generate=1, stdout=out)
    assert "1/2 originals done" in out.getvalue()  # what was done was said first


def test_a_second_demo_with_every_candidate_there_says_nothing_of_generating(db, monkeypatch):
    from cfannotate.candidates.models import CandidateStatus
    from cfannotate.demo.setup import demo_setup
    from tests.factories import make_candidate

    for campaign in demo_setup().campaigns:  # rejected: selection leaves them alone
        make_candidate(campaign.originals.first(), "Bad.", status=CandidateStatus.REJECTED)
    _fake_generation(monkeypatch)
    out = StringIO()
    call_command("demo_setup", generate=1, stdout=out)
    assert "Generating candidates" not in out.getvalue()
    assert "generated candidates already" in out.getvalue()
