from io import StringIO

from django.contrib.auth import authenticate
from django.core.management import call_command

from cfannotate.campaigns.models import Campaign


def test_demo_setup_is_idempotent_and_prints_a_working_login(db):
    out = StringIO()
    call_command("demo_setup", generate=0, stdout=out)
    call_command("demo_setup", generate=0, stdout=(second := StringIO()))
    assert Campaign.objects.count() == 2
    counts = sorted(c.originals.count() for c in Campaign.objects.all())
    assert counts == [20, 40]
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
