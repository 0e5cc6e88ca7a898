from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cfannotate.quality.models import WorkerQuality
from tests.factories import make_labeling_campaign
from tests.quality.conftest import work


def test_quality_refresh_prints_the_verdicts_and_agreement(db):
    campaign = make_labeling_campaign(
        units=4, gold=2, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    work(campaign, real=lambda _: (True, "negative"))
    work(campaign, real=lambda _: (True, "negative"))
    out = StringIO()
    call_command("quality_refresh", str(campaign.id), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("2 of 2 workers qualified; 12 of 12 counterfactuals kept")
    assert "raw 1.000" in lines[1]
    assert WorkerQuality.objects.filter(campaign=campaign).count() == 2


def test_an_unknown_campaign_is_one_clear_line(db):
    with pytest.raises(CommandError, match="No campaign with id 424242"):
        call_command("quality_refresh", "424242")
