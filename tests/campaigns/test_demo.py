from io import StringIO

from django.contrib.auth import authenticate
from django.core.management import call_command

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


def test_the_demo_campaigns_come_with_gold_and_training_rounds_and_open_for_labeling(db):
    from cfannotate.campaigns.demo import demo_generate, demo_setup
    from cfannotate.campaigns.models import CampaignStatus
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
    lines = demo_generate(setup.campaigns, originals_per_campaign=1, show_progress=False)
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
    from cfannotate.campaigns.demo import EXAMPLE_NAME, demo_setup
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
