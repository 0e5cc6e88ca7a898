"""Every model has a usable admin: changelist, search and change pages render."""

import pytest
from django.contrib import admin
from rest_framework.authtoken.models import TokenProxy

from cfannotate.core.api_tokens import api_token_rotate
from cfannotate.core.models import ApiToken
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
    from cfannotate.quality.models import WorkerDecision, WorkerQuality
    from tests.factories import make_platform_records

    make_platform_records(campaign, assignment)
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


def test_api_tokens_are_listed_by_their_ending_and_revoked_by_deleting(client, researcher):
    new = api_token_rotate(user=researcher)
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    listing = client.get("/admin/core/apitoken/").content.decode()
    assert new.key[-4:] in listing
    assert new.key not in listing and new.token.key_digest not in listing
    assert client.get("/admin/core/apitoken/add/").status_code == 403
    page = client.get(f"/admin/core/apitoken/{new.token.pk}/change/").content.decode()
    assert new.token.key_digest not in page
    client.post(f"/admin/core/apitoken/{new.token.pk}/delete/", {"post": "yes"})
    assert not ApiToken.objects.exists()
    assert TokenProxy not in admin.site._registry  # it would make plain keys nobody can use
