"""The demo: a researcher login and two campaigns built from the project's fixtures."""

import json
import math
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from cfannotate.campaigns.datasets import read_jsonl
from cfannotate.campaigns.models import Campaign, CampaignStatus, TaskType
from cfannotate.campaigns.services import campaign_create, originals_import
from cfannotate.candidates.models import CandidateSource
from cfannotate.core.text import counted
from cfannotate.labeling.gold import gold_rounds_import

FIXTURES_DIR = Path(settings.BASE_DIR) / "fixtures"
DEMO_USERNAME = "researcher"
EXAMPLE_NAME = "Movie review sentiment: labeled example (simulated crowd)"
EXAMPLE_COUNTERFACTUALS = "sentiment_example_counterfactuals.jsonl"
# Six careful workers and two spammers (one far too fast, one always the same answer),
# so that the quality page shows the C.2 filter at work.
EXAMPLE_CROWD = (
    "careful",
    "fast",
    "careful",
    "careful",
    "constant",
    "careful",
    "careful",
    "careful",
)
EXAMPLE_START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)

# (name, task type, originals, gold and training rounds written for those originals)
DEMO_CAMPAIGNS = [
    (
        "Movie review sentiment (demo)",
        TaskType.SENTIMENT,
        "sentiment_reviews.jsonl",
        "sentiment_gold.jsonl",
    ),
    ("Natural language inference (demo)", TaskType.NLI, "nli_pairs.jsonl", "nli_gold.jsonl"),
]


@dataclass(frozen=True)
class DemoSetup:
    username: str
    password: str
    campaigns: list[Campaign]
    example: Campaign | None = None


@transaction.atomic
def demo_setup() -> DemoSetup:
    """Create (or refresh) the demo researcher and campaigns; safe to run repeatedly.

    The researcher gets a new random password each run, printed by the command, so
    no well-known credentials exist even on a demo install.
    """
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=DEMO_USERNAME)
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()

    campaigns = []
    for name, task_type, fixture, gold_fixture in DEMO_CAMPAIGNS:
        campaign = Campaign.objects.filter(owner=user, name=name).first()
        if campaign is None:
            campaign = campaign_create(owner=user, name=name, task_type=task_type)
            originals_import(campaign=campaign, records=read_jsonl(FIXTURES_DIR / fixture))
            gold_rounds_import(campaign=campaign, records=read_jsonl(FIXTURES_DIR / gold_fixture))
        campaigns.append(campaign)
    example = Campaign.objects.filter(owner=user, name=EXAMPLE_NAME).first()
    if example is None:
        example = demo_labeled_example(owner=user)
    return DemoSetup(
        username=user.username, password=password, campaigns=campaigns, example=example
    )


def demo_labeled_example(*, owner, seed: int = 2026) -> Campaign:
    """A campaign already labeled by a simulated crowd, so quality and exports show data.

    The counterfactuals are hand-written for the first twelve fixture reviews, with
    their true validity and label; eight simulated workers come for work, and the six
    that find some (two of them spammers) label them through the real assignment and
    round services (`cfannotate.labeling.simulation`), and quality
    control runs as it does after real rounds. The workers' ids start with `demo-`.
    """
    from cfannotate.candidates.imports import candidates_import
    from cfannotate.crowd.services import worker_get_or_create
    from cfannotate.labeling.assignments import NoWorkLeft
    from cfannotate.labeling.services import labeling_open
    from cfannotate.labeling.simulation import BEHAVIOURS, gold_truth, work_assignment
    from cfannotate.labeling.units import units_create_from_selection
    from cfannotate.quality.services import quality_refresh

    campaign = campaign_create(
        owner=owner,
        name=EXAMPLE_NAME,
        task_type=TaskType.SENTIMENT,
        settings={"rounds_per_assignment": 4},
    )
    originals_import(
        campaign=campaign, records=read_jsonl(FIXTURES_DIR / "sentiment_reviews.jsonl")
    )
    gold_rounds_import(campaign=campaign, records=read_jsonl(FIXTURES_DIR / "sentiment_gold.jsonl"))
    written = read_jsonl(FIXTURES_DIR / EXAMPLE_COUNTERFACTUALS)
    rows = [
        {"original_id": row["original_id"], "text": row["text"], "intended_label": row["label"]}
        for row in written
    ]
    content = "\n".join(json.dumps(row) for row in rows).encode()
    candidates_import(
        campaign=campaign, file_name=EXAMPLE_COUNTERFACTUALS, content=content, queue_selection=False
    )
    units_create_from_selection(campaign=campaign)
    labeling_open(campaign=campaign)

    by_text = {
        (candidate.original.external_id, candidate.text): candidate.id
        for candidate in campaign.candidates.select_related("original")
    }
    truth = {
        by_text[row["original_id"], row["text"]]: (row["valid"], row["label"]) for row in written
    }
    truth.update(gold_truth(campaign))
    rng = random.Random(seed)
    clock = EXAMPLE_START
    for _wave in range(3):
        for number, kind in enumerate(EXAMPLE_CROWD, start=1):
            worker = worker_get_or_create(platform="link", external_id=f"demo-{kind}-{number}")
            clock += timedelta(minutes=rng.randint(1, 20))
            try:
                work_assignment(
                    campaign=campaign,
                    worker=worker,
                    behaviour=BEHAVIOURS[kind],
                    truth=truth,
                    start=clock,
                    rng=rng,
                )
            except NoWorkLeft:
                continue
        quality_refresh(campaign=campaign)
    return campaign


# Each campaign's originals go to the generator in about this many batches, so that the
# demo can tell how far it is; fewer batches batch more on a GPU, more tell more often.
PROGRESS_STEPS = 10


@dataclass(frozen=True)
class GenerationProgress:
    """How far the demo's generation is, over every campaign it generates for."""

    campaign: str  # the one being generated for
    done: int  # originals done
    total: int
    seconds: float  # since generation started, model loading included

    @property
    def seconds_left(self) -> float | None:
        """A straight-line estimate; None before the first batch is done."""
        if not self.done:
            return None
        return self.seconds / self.done * (self.total - self.done)

    def line(self) -> str:
        left = self.seconds_left
        if left is None:
            when = "loading the model and starting (the first batch takes longest)"
        elif self.done == self.total:
            when = f"finished in {_duration(self.seconds)}"
        else:
            when = f"about {_duration(left)} left"
        return f"{self.done}/{self.total} originals done ({self.campaign}); {when}."


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def demo_generate(
    campaigns: list[Campaign],
    *,
    originals_per_campaign: int,
    on_progress: Callable[[GenerationProgress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """Generate candidates for the first originals of campaigns that have none yet.

    Returns one line per campaign saying what happened. Runs on CPU in the demo, so
    it covers a few originals; `manage.py generate` does the rest. `on_progress` hears
    how far it is before the first batch and after each one (originals done, time left):
    that line is the demo's progress, so the generators draw no bars of their own.
    """
    from cfannotate.candidates.services import candidates_generate
    from cfannotate.labeling.services import labeling_open
    from cfannotate.labeling.units import units_create_from_selection

    # 1. What to generate for: gold originals are labeled in gold rounds only.
    planned: dict[int, list] = {}
    for campaign in campaigns:
        if not campaign.candidates.filter(source=CandidateSource.GENERATED).exists():
            planned[campaign.pk] = list(
                campaign.originals.exclude(gold_rounds__isnull=False)
                .select_related("label")
                .order_by("id")[:originals_per_campaign]
            )
    total = sum(len(originals) for originals in planned.values())
    started, done = clock(), 0

    def tell(campaign: Campaign) -> None:
        if on_progress is not None and total:
            on_progress(GenerationProgress(campaign.name, done, total, clock() - started))

    # 2. Generate in batches, telling how far it is after each.
    lines = []
    for campaign in campaigns:
        generated = campaign.candidates.filter(source=CandidateSource.GENERATED)
        if campaign.pk not in planned:
            lines.append(f"{campaign.name}: {generated.count()} generated candidates already.")
        else:
            originals = planned[campaign.pk]
            size = max(1, math.ceil(len(originals) / PROGRESS_STEPS))
            stored = kept = 0
            campaign_started = clock()
            if done == 0:
                tell(campaign)
            for start in range(0, len(originals), size):
                batch = originals[start : start + size]
                summary = candidates_generate(campaign=campaign, originals=batch)
                stored, kept, done = stored + summary.stored, kept + summary.kept, done + len(batch)
                tell(campaign)
            lines.append(
                f"{campaign.name}: {counted(stored, 'candidate')} ({kept} kept by the filters) "
                f"for {counted(len(originals), 'original')} in {clock() - campaign_started:.0f} s."
            )
        selected = units_create_from_selection(campaign=campaign)
        if campaign.units.exists() and campaign.status != CampaignStatus.LABELING:
            labeling_open(campaign=campaign)
        units = campaign.units.count()
        lines.append(
            f"{campaign.name}: {counted(units, 'labeling unit')} of diverse counterfactuals"
            f"{f' ({selected.units} new)' if selected.units else ''}; open for labeling."
            if units
            else f"{campaign.name}: no fluent candidates to label yet."
        )
    return lines
