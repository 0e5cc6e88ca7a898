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


def test_apply_names_each_refused_decision_and_fails(db, researcher, monkeypatch):
    from cfannotate.core.exceptions import CfannotateError
    from cfannotate.crowd import review
    from cfannotate.quality.decisions import decision_update
    from cfannotate.quality.models import DecisionState, WorkerDecision
    from cfannotate.quality.services import quality_refresh

    campaign = make_labeling_campaign(
        units=4, gold=2, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    worker, _ = work(campaign, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    decision = WorkerDecision.objects.get(worker=worker)
    decision_update(decision=decision, user=researcher, state="confirmed")

    def refuse(**kwargs):
        raise CfannotateError("The platform is unreachable: connection refused.")

    monkeypatch.setattr(review, "assignment_approve", refuse)
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("quality_refresh", str(campaign.id), "--apply", stdout=out, stderr=err)
    assert str(caught.value) == "1 decision refused by the platforms: see above."
    assert "Sent 0 decisions to the platforms; 1 refused." in out.getvalue()
    assert err.getvalue().strip() == (
        f"Approve for worker {worker}: The platform is unreachable: connection refused."
    )
    assert WorkerDecision.objects.get(pk=decision.pk).state == DecisionState.FAILED
