"""Small builders for test data; each makes a valid object with the least typing."""

import itertools
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignStatus, Original, TaskType
from cfannotate.campaigns.services import campaign_create
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.crowd.models import Platform, Worker
from cfannotate.labeling.models import (
    Assignment,
    GoldItem,
    GoldKind,
    GoldRound,
    LabelingUnit,
    UnitItem,
)

_sequence = itertools.count(1)


# Every user the factories make signs in with this password.
TEST_PASSWORD = "pw-for-tests"


def make_user(username: str | None = None, **extra):
    username = username or f"user{next(_sequence)}"
    return get_user_model().objects.create_user(username=username, password=TEST_PASSWORD, **extra)


def make_campaign(owner=None, task_type: str = TaskType.SENTIMENT, **kwargs) -> Campaign:
    owner = owner or make_user()
    return campaign_create(
        owner=owner,
        name=kwargs.pop("name", f"Campaign {next(_sequence)}"),
        task_type=task_type,
        **kwargs,
    )


def make_original(
    campaign: Campaign, text: str | None = None, label: str | None = None, context: str = ""
) -> Original:
    label_obj = campaign.labels.get(value=label) if label else campaign.labels.first()
    number = next(_sequence)
    return Original.objects.create(
        campaign=campaign,
        external_id=f"o{number}",
        text=text or f"Sentence number {number}.",
        context=context,
        label=label_obj,
    )


def make_candidate(original: Original, text: str | None = None, **kwargs) -> Candidate:
    return Candidate.objects.create(
        campaign=original.campaign,
        original=original,
        text=f"{original.text} (variant {next(_sequence)})" if text is None else text,
        generator=kwargs.pop("generator", "polyjuice"),
        **kwargs,
    )


def make_unit(original: Original, candidates: int = 3, judgments_needed: int = 2) -> LabelingUnit:
    unit = LabelingUnit.objects.create(
        campaign=original.campaign, original=original, judgments_needed=judgments_needed
    )
    for position in range(candidates):
        UnitItem.objects.create(unit=unit, candidate=make_candidate(original), position=position)
    return unit


def make_worker(platform: str = Platform.LINK) -> Worker:
    return Worker.objects.create(platform=platform, external_id=f"w{next(_sequence)}")


def make_assignment(campaign: Campaign, worker: Worker | None = None, **kwargs) -> Assignment:
    return Assignment.objects.create(
        campaign=campaign,
        worker=worker or make_worker(),
        token_nonce=secrets.token_hex(16),
        lease_expires_at=timezone.now() + timedelta(minutes=campaign.lease_minutes),
        **kwargs,
    )


def make_gold_round(
    campaign: Campaign, kind: str = GoldKind.GOLD, items: int = 3, label: str | None = None
) -> GoldRound:
    """A gold or training round on a fresh original, every item valid with `label`."""
    original = make_original(campaign)
    expected = campaign.labels.get(value=label) if label else campaign.labels.last()
    gold_round = GoldRound.objects.create(campaign=campaign, original=original, kind=kind)
    for position in range(1, items + 1):
        candidate = make_candidate(
            original, source=CandidateSource.AUTHORED, status=CandidateStatus.GOLD, generator="gold"
        )
        GoldItem.objects.create(
            gold_round=gold_round,
            candidate=candidate,
            position=position,
            expected_valid=True,
            expected_label=expected,
            explanation=f"Known answer {position} of {kind} round.",
        )
    return gold_round


def make_labeling_campaign(
    *, units: int = 25, gold: int = 3, training: int = 1, k: int = 2, **settings
) -> Campaign:
    """A campaign open for labeling, with units of three candidates and gold/training rounds."""
    campaign = make_campaign(settings={"judgments_per_candidate": k, **settings})
    for _ in range(units):
        make_unit(make_original(campaign), judgments_needed=k)
    for _ in range(gold):
        make_gold_round(campaign, GoldKind.GOLD)
    for _ in range(training):
        make_gold_round(campaign, GoldKind.TRAINING)
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.LABELING)
    campaign.refresh_from_db()
    return campaign


def make_platform_records(campaign: Campaign, assignment: Assignment) -> None:
    """One row of every crowd-platform model (publication, HIT, link, review, action log)."""
    from decimal import Decimal

    from cfannotate.crowd.models import (
        AssignmentReview,
        InvitationLink,
        MTurkHit,
        PlatformAction,
        Publication,
    )

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
