"""Reads for the crowd stage: a campaign's publications, links, personal links, review queue
and action log, the example round a platform's preview shows, and what a worker is told
before starting (rounds, time, pay)."""

import math
import statistics
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, F, QuerySet, Sum
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.exceptions import NotFound
from cfannotate.crowd.models import (
    InvitationLink,
    PersonalLink,
    Platform,
    PlatformAction,
    Publication,
    Worker,
)
from cfannotate.labeling.assignments import (
    no_work_for_a_new_worker,
    rounds_come_back,
    units_unfinished,
)
from cfannotate.labeling.highlight import Segment, change_segments
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldKind,
    GoldRound,
    LabelingUnit,
    Round,
)

REVIEW_QUEUE_SIZE = 50
ALL_TAKEN_NOW = "Other workers are doing every open round of this task right now."
RECENT_ACTIONS = 15
# The time estimate from past rounds needs this many, and reads at most the latest ones.
ESTIMATE_MIN_ROUNDS = 5
ESTIMATE_RECENT_ROUNDS = 500


def publications_of(campaign: Campaign) -> QuerySet[Publication]:
    return campaign.publications.prefetch_related("hits").order_by("-created_at")


def links_of(campaign: Campaign) -> QuerySet[InvitationLink]:
    return campaign.invitation_links.order_by("-created_at")


def personal_links_of(campaign: Campaign) -> QuerySet[PersonalLink]:
    return campaign.personal_links.select_related("worker").order_by("-created_at")


def review_queue(campaign: Campaign, limit: int = REVIEW_QUEUE_SIZE) -> list[Assignment]:
    """Submitted assignments, undecided ones first, newest first."""
    return list(
        Assignment.objects.filter(campaign=campaign, state=AssignmentState.SUBMITTED)
        .select_related("worker", "review")
        .order_by(F("review__decided_at").desc(nulls_first=True), "-submitted_at")[:limit]
    )


def recent_actions(campaign: Campaign, limit: int = RECENT_ACTIONS) -> list[PlatformAction]:
    return list(
        PlatformAction.objects.filter(campaign=campaign)
        .select_related("worker", "assignment")
        .order_by("-created_at", "-id")[:limit]
    )


def _assignments_lacking(campaign: Campaign) -> int:
    """New assignments the units need: the judgments nobody holds yet, a round each."""
    open_claims = (
        LabelingUnit.objects.filter(campaign=campaign).aggregate(
            n=Sum(F("judgments_needed") - F("claims"))
        )["n"]
        or 0
    )
    return math.ceil(max(open_claims, 0) / max(campaign.rounds_per_assignment, 1))


def assignments_needed(campaign: Campaign) -> int:
    """Assignments that would give every unit the judgments it still lacks (at least one:
    the number a new publication's form starts from)."""
    return max(1, _assignments_lacking(campaign))


# Where a study's cap lives in `Publication.options`: the most places the labeling sweep
# may take it to (`crowd.places.places_top_up`); absent, it never grows by itself.
PLACES_CAP = "places_up_to"


@dataclass(frozen=True)
class StudyPlaces:
    publication: Publication
    places: int  # workers the study lets in, in all
    taken: int  # its assignments in progress or submitted here

    @property
    def left(self) -> int:
        return max(self.places - self.taken, 0)

    @property
    def up_to(self) -> int | None:
        """The cap the sweep may add places up to; None when it adds none."""
        cap = self.publication.options.get(PLACES_CAP)
        return None if cap is None else int(cap)


@dataclass(frozen=True)
class PlacesShort:
    """The campaign's Prolific studies have fewer places left than its units need."""

    newest: StudyPlaces  # where places are best added
    left: int  # across the campaign's studies
    needed: int  # new assignments the units still lack

    @property
    def short(self) -> int:
        return self.needed - self.left

    @property
    def sweep_adds(self) -> bool:
        """Whether the labeling sweep adds places to the newest study (it has room under
        its cap), or the researcher must."""
        return self.newest.up_to is not None and self.newest.up_to > self.newest.places


def study_places(campaign: Campaign) -> list[StudyPlaces]:
    """Each Prolific study of the campaign with its places and how many are taken.

    A place is taken by an assignment in progress or submitted; a returned or timed-out
    one frees its place on Prolific as its assignment ends here (a status sync).
    """
    studies = list(
        Publication.objects.filter(campaign=campaign, platform=Platform.PROLIFIC)
        .exclude(external_id="")
        .order_by("created_at", "id")
    )
    taken = dict(
        Assignment.objects.filter(
            campaign=campaign,
            platform_task_id__in=[study.external_id for study in studies],
            state__in=[AssignmentState.ACTIVE, AssignmentState.SUBMITTED],
        )
        .values_list("platform_task_id")
        .annotate(n=Count("id"))
    )
    return [
        StudyPlaces(study, int(study.options.get("places") or 0), taken.get(study.external_id, 0))
        for study in studies
    ]


def places_short(campaign: Campaign, studies: list[StudyPlaces]) -> PlacesShort | None:
    """Whether the campaign's Prolific studies cannot take the assignments its units still
    need (re-queued disputes and the replaced rounds of filtered workers add to them)."""
    if not studies:
        return None
    needed = _assignments_lacking(campaign)
    left = sum(study.left for study in studies)
    if needed <= left:
        return None
    return PlacesShort(newest=studies[-1], left=left, needed=needed)


@dataclass(frozen=True)
class ExampleItem:
    segments: list[Segment]


@dataclass(frozen=True)
class ExampleRound:
    original_text: str
    original_context: str
    original_label: object
    items: list[ExampleItem]


def preview_example(campaign: Campaign) -> ExampleRound | None:
    """A round to show before a worker accepts: a training round, else the first unit.

    Only texts are shown; expected answers stay on the server.
    """
    gold = (
        GoldRound.objects.filter(campaign=campaign, kind=GoldKind.TRAINING, is_active=True)
        .select_related("original__label")
        .order_by("id")
        .first()
    )
    if gold is not None:
        original = gold.original
        texts = [item.candidate.text for item in gold.items.select_related("candidate")]
    else:
        unit = (
            LabelingUnit.objects.filter(campaign=campaign)
            .select_related("original__label")
            .order_by("id")
            .first()
        )
        if unit is None:
            return None
        original = unit.original
        texts = [item.candidate.text for item in unit.items.select_related("candidate")]
    return ExampleRound(
        original_text=original.text,
        original_context=original.context,
        original_label=original.label,
        items=[ExampleItem(segments=change_segments(original.text, text)) for text in texts],
    )


@dataclass(frozen=True)
class SessionFacts:
    """What a worker is told before starting: never which rounds are gold."""

    rounds: int  # training rounds included
    minutes: int | None  # about how long, when something says so
    minutes_source: str  # "platform" (the study's estimate) or "past" (median of past rounds)
    pay: str  # e.g. "US$2.50"; empty when no platform publication states it
    # For a worker new to the task: other workers hold every open round now, and when
    # some may come back (empty otherwise). Said before Start, not after it.
    all_taken: str = ""
    # For a worker new to the task: it has nothing for anyone now (finished, paused, not
    # open yet, or every unit fully judged), in words; empty otherwise. Said instead of
    # the numbers and Start.
    no_work_left: str = ""


def _median_round_seconds(campaign: Campaign) -> float | None:
    """The median time workers took on this campaign's recent submitted rounds, if enough."""
    times = (
        Round.objects.filter(
            assignment__campaign=campaign, submitted_at__isnull=False, served_at__isnull=False
        )
        .order_by("-submitted_at")
        .values_list("served_at", "submitted_at")[:ESTIMATE_RECENT_ROUNDS]
    )
    seconds = [(submitted - served).total_seconds() for served, submitted in times]
    return statistics.median(seconds) if len(seconds) >= ESTIMATE_MIN_ROUNDS else None


def _all_taken(campaign: Campaign) -> str:
    """Why a new worker gets nothing now although the task is open and unfinished: every
    open unit is claimed by workers who may still submit; empty otherwise."""
    if campaign.status != CampaignStatus.LABELING:
        return ""
    if not units_unfinished(campaign).exists():
        return ""
    return f"{ALL_TAKEN_NOW} {rounds_come_back(campaign, timezone.now())}"


def _rounds_for_a_new_worker(campaign: Campaign) -> tuple[int, str]:
    """The rounds a worker starting now is given: the campaign's numbers, fewer where
    fewer units are open or fewer gold and training rounds are active (the end of a
    campaign, a first gold round or two). All of them while nothing is open, with why
    (`_all_taken`)."""
    real = min(
        campaign.rounds_per_assignment,
        LabelingUnit.objects.filter(campaign=campaign, claims__lt=F("judgments_needed")).count(),
    )
    if real == 0:
        return campaign.training_rounds + campaign.rounds_total, _all_taken(campaign)
    active = dict(
        GoldRound.objects.filter(campaign=campaign, is_active=True)
        .order_by()
        .values_list("kind")
        .annotate(n=Count("id"))
    )
    gold = min(campaign.gold_rounds_per_assignment, active.get(GoldKind.GOLD, 0))
    training = min(campaign.training_rounds, active.get(GoldKind.TRAINING, 0))
    return training + real + gold, ""


def session_facts(campaign: Campaign, publication: Publication | None = None) -> SessionFacts:
    """Rounds, time and pay for one assignment of `campaign`, entered through `publication`
    (None: an invitation or personal link, which states no pay)."""
    rounds, all_taken = _rounds_for_a_new_worker(campaign)
    minutes, source, pay = None, "", ""
    options = publication.options if publication is not None else {}
    if publication is not None and publication.platform == Platform.MTURK and options.get("reward"):
        pay = f"US${Decimal(str(options['reward'])):.2f}"
    elif publication is not None and publication.platform == Platform.PROLIFIC:
        if options.get("reward_cents"):
            # Prolific pays in the study's currency, which the options do not name.
            pay = f"{int(options['reward_cents']) / 100:.2f} in the study's currency"
        if options.get("minutes"):
            minutes, source = int(options["minutes"]), "platform"
    if minutes is None:
        median = _median_round_seconds(campaign)
        if median is not None:
            minutes, source = max(1, math.ceil(median * rounds / 60)), "past"
    ended = no_work_for_a_new_worker(campaign)
    return SessionFacts(
        rounds=rounds,
        minutes=minutes,
        minutes_source=source,
        pay=pay,
        all_taken=all_taken,
        no_work_left=f"{ended.message} {ended.come_back}" if ended is not None else "",
    )


def holds_assignment(campaign: Campaign, *, platform: str, external_id: str | None) -> bool:
    """Whether this worker has an assignment in progress here, which Start resumes (one
    whose lease ran out is ended by Start, not resumed)."""
    if not external_id:
        return False
    return Assignment.objects.filter(
        campaign=campaign,
        worker__platform=platform,
        worker__external_id=external_id,
        state=AssignmentState.ACTIVE,
        lease_expires_at__gte=timezone.now(),
    ).exists()


def publication_of(campaign: Campaign, publication_id: int) -> Publication:
    """A publication of the campaign; NotFound for any other id."""
    publication = Publication.objects.filter(pk=publication_id, campaign=campaign).first()
    if publication is None:
        raise NotFound(f"No publication {publication_id} in this campaign.")
    return publication


def assignment_of(campaign: Campaign, assignment_id: int) -> Assignment:
    """An assignment of the campaign, with its worker; NotFound for any other id."""
    assignment = (
        Assignment.objects.select_related("worker", "campaign")
        .filter(pk=assignment_id, campaign=campaign)
        .first()
    )
    if assignment is None:
        raise NotFound(f"No assignment {assignment_id} in this campaign.")
    return assignment


def worker_of(campaign: Campaign, worker_id: int) -> Worker:
    """A worker who worked on the campaign (only such a worker can be blocked from it)."""
    worker = Worker.objects.filter(pk=worker_id, assignments__campaign=campaign).first()
    if worker is None:
        raise NotFound(f"No worker {worker_id} in this campaign.")
    return worker
