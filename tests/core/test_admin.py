"""Every model has a usable admin: changelist, search and change pages render."""

import pytest
from django.contrib import admin
from django.urls import reverse

from cfannotate.labeling.models import GoldItem, GoldRound, Judgment, Round, RoundKind
from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_assignment, make_original, make_unit, make_user

PROJECT_APPS = {"campaigns", "candidates", "crowd", "labeling", "quality"}


@pytest.fixture
def populated(campaign):
    original = make_original(campaign)
    unit = make_unit(original)
    assignment = make_assignment(campaign)
    round_ = Round.objects.create(
        assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    candidate = unit.items.first().candidate
    Judgment.objects.create(
        round=round_, candidate=candidate, is_valid=True, label=campaign.labels.first()
    )
    AggregatedLabel.objects.create(
        candidate=candidate,
        label=campaign.labels.first(),
        is_valid=True,
        kept=True,
        votes=1,
        qualified_votes=1,
        agreement=1.0,
    )
    gold = GoldRound.objects.create(campaign=campaign, original=original)
    from tests.factories import make_candidate

    GoldItem.objects.create(
        gold_round=gold,
        candidate=make_candidate(original),
        position=0,
        expected_label=campaign.labels.first(),
    )
    from cfannotate.candidates.runs import generation_run_create

    generation_run_create(campaign=campaign, chunk_size=1)
    _crowd_and_quality_rows(campaign, assignment)
    return campaign


def _crowd_and_quality_rows(campaign, assignment):
    from decimal import Decimal

    from django.utils import timezone

    from cfannotate.crowd.models import (
        AssignmentReview,
        InvitationLink,
        MTurkHit,
        Platform,
        PlatformAction,
        Publication,
    )
    from cfannotate.quality.models import WorkerDecision, WorkerQuality

    publication = Publication.objects.create(
        campaign=campaign, platform=Platform.MTURK, external_id="HT", options={"title": "t"}
    )
    MTurkHit.objects.create(publication=publication, hit_id="HIT1", max_assignments=3)
    InvitationLink.objects.create(campaign=campaign, name="Lab", quota=2)
    AssignmentReview.objects.create(
        assignment=assignment, decision="approved", decided_at=timezone.now()
    )
    PlatformAction.objects.create(
        platform=Platform.LINK,
        action="bonus",
        campaign=campaign,
        assignment=assignment,
        worker=assignment.worker,
        amount=Decimal("1"),
        outcome="local",
        finished_at=timezone.now(),
    )
    WorkerQuality.objects.create(
        campaign=campaign, worker=assignment.worker, qualified=False, rounds=1, reasons=["x"]
    )
    WorkerDecision.objects.create(
        campaign=campaign,
        worker=assignment.worker,
        assignment=assignment,
        action="approve",
        reason="Passed quality control.",
    )


def test_every_project_model_is_registered():
    from django.apps import apps

    models = [m for m in apps.get_models() if m._meta.app_label in PROJECT_APPS]
    missing = [
        m.__name__
        for m in models
        if m not in admin.site._registry
        and m.__name__ not in {"CampaignLabel", "UnitItem", "GoldItem"}
    ]
    assert missing == []


def test_admin_pages_render(client, populated):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    for model, _model_admin in admin.site._registry.items():
        if model._meta.app_label not in PROJECT_APPS:
            continue
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        assert client.get(changelist).status_code == 200, changelist
        assert client.get(changelist, {"q": "x"}).status_code == 200, changelist
        obj = model.objects.first()
        change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        assert client.get(change).status_code == 200, change
