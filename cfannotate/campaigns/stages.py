"""Where a campaign stands in its pipeline, and the next step the researcher should take.

The stages run in one order: upload the originals, generate candidates, review them, make
gold rounds, open labeling, invite workers, collect the judgments, run quality control,
export. campaigns counts its own originals; the apps above it report the rest through
`register_facts` (a function `campaign -> dict` of `StageFacts` fields, connected in
their `AppConfig.ready()`), so campaigns never imports them. The overview page shows
every stage with what it has so far and points at the first one not done.
"""

from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.text import counted


@dataclass(frozen=True)
class StageFacts:
    """The counts the stages are judged on; an app that is not installed leaves its zeros."""

    originals: int = 0
    generation_active: bool = False  # a run is queued or running
    import_active: bool = False  # a file of the researcher's candidates is being imported
    candidates: int = 0  # generated or imported, not the counterfactuals of gold rounds
    originals_with_candidates: int = 0  # originals that have at least one of those
    units: int = 0  # labeling units: candidates selected for labeling
    gold_rounds: int = 0  # active gold rounds
    training_rounds: int = 0  # active training rounds
    invitations: int = 0  # invitation links, personal links and platform publications
    places_short: int = 0  # Prolific places the researcher must add for the units' needs
    assignments: int = 0
    judgments_done: int = 0
    judgments_needed: int = 0
    labels_kept: int = 0  # counterfactuals quality control kept, with their label


FactsSource = Callable[[Campaign], dict]
_sources: list[FactsSource] = []
FACT_NAMES = frozenset(field.name for field in fields(StageFacts))


def register_facts(source: FactsSource) -> FactsSource:
    """Add a source of facts (once, however often `ready()` runs)."""
    if source not in _sources:
        _sources.append(source)
    return source


def stage_facts(campaign: Campaign) -> StageFacts:
    facts = StageFacts(originals=campaign.originals.count())
    for source in _sources:
        reported = source(campaign)
        unknown = set(reported) - FACT_NAMES
        if unknown:
            raise ValueError(f"{source.__qualname__} reports unknown facts: {sorted(unknown)}")
        facts = replace(facts, **reported)
    return facts


@dataclass(frozen=True)
class Stage:
    key: str  # the section of the campaign that does it (`sections.SECTIONS`)
    title: str
    done: bool
    summary: str  # what it has so far
    action: str  # the next step, said as an instruction


def _generation_summary(facts: StageFacts) -> str:
    """What generation made, and for how many originals ("58 candidates for 3 of 40
    originals"): a campaign generated for a few originals first, as the demo is, says so
    instead of looking done."""
    made = counted(facts.candidates, "candidate")
    if not facts.candidates or not facts.originals:
        return made
    if facts.originals_with_candidates >= facts.originals:
        return f"{made} for all {counted(facts.originals, 'original')}"
    return f"{made} for {facts.originals_with_candidates} of {counted(facts.originals, 'original')}"


def campaign_stages(campaign: Campaign, facts: StageFacts) -> list[Stage]:
    """Every stage in pipeline order, with whether it is done and what to do there."""
    return [*_preparation_stages(campaign, facts), *_labeling_stages(campaign, facts)]


def _labeling_open(campaign: Campaign) -> bool:
    return campaign.status in (CampaignStatus.LABELING, CampaignStatus.FINISHED)


def _preparation_stages(campaign: Campaign, facts: StageFacts) -> list[Stage]:
    """Data, generation, review, gold: what the researcher does before workers come."""
    gold_wanted = campaign.gold_rounds_per_assignment
    labeling_open = _labeling_open(campaign)
    if facts.generation_active:
        generation_action = "Generation is running: follow it on the generation page."
    elif facts.import_active:
        generation_action = "Your candidates are being imported: follow it on the generation page."
    elif facts.originals and not facts.candidates:
        generation_action = "Generate candidates, or import your own."
    elif facts.originals_with_candidates < facts.originals:
        # Not counted here: the generation page tells the ones not generated yet from the
        # ones that came out with none, and leaves out gold rounds' originals.
        generation_action = "Generate candidates for the originals without any, or import your own."
    else:
        generation_action = "Generate candidates again, or import more."
    return [
        Stage(
            "data",
            "Data",
            facts.originals > 0,
            counted(facts.originals, "original"),
            "Upload the originals: a CSV, TSV or JSONL file of labeled texts.",
        ),
        Stage(
            "generation",
            "Generation",
            facts.candidates > 0 and not (facts.generation_active or facts.import_active),
            _generation_summary(facts)
            + (" · a run is in progress" if facts.generation_active else "")
            + (" · an import is in progress" if facts.import_active else ""),
            generation_action,
        ),
        Stage(
            "review",
            "Review",
            facts.units > 0 and (facts.gold_rounds > 0 or labeling_open),
            f"{counted(facts.units, 'labeling unit')} of selected candidates",
            "Review the selected candidates: accept, reject or edit them."
            if facts.units
            else "No candidate is selected for labeling yet: accept some in review.",
        ),
        Stage(
            "gold",
            "Gold and training",
            facts.gold_rounds >= max(gold_wanted, 1) or (labeling_open and facts.gold_rounds > 0),
            f"{counted(facts.gold_rounds, 'gold round')}, "
            f"{counted(facts.training_rounds, 'training round')} "
            f"({gold_wanted} hidden in each assignment)",
            f"Make gold rounds: each assignment hides {gold_wanted}.",
        ),
    ]


def _labeling_stages(campaign: Campaign, facts: StageFacts) -> list[Stage]:
    """Labeling, workers, judgments, quality, exports: the crowd's part and what follows."""
    judged = facts.judgments_needed > 0 and facts.judgments_done >= facts.judgments_needed
    return [
        Stage(
            "labeling",
            "Labeling",
            _labeling_open(campaign),
            f"Status: {campaign.get_status_display()}",
            "Labeling is paused: open it again."
            if campaign.status == CampaignStatus.PAUSED
            else "Open the campaign for labeling.",
        ),
        Stage(
            "platforms",
            "Workers",
            facts.invitations > 0 or facts.assignments > 0,
            f"{counted(facts.invitations, 'invitation')}, "
            f"{counted(facts.assignments, 'assignment')}",
            "Invite workers: an invitation link, MTurk or Prolific.",
        ),
        Stage(
            "judgments",
            "Judgments",
            judged,
            f"{facts.judgments_done} of {facts.judgments_needed} judgments",
            f"Add {counted(facts.places_short, 'place')} to the Prolific study, or let it add "
            "them by itself up to a cap: the units need more assignments than it can take."
            if facts.places_short
            else "Wait for the workers' judgments; quality control watches them as they come.",
        ),
        Stage(
            "quality",
            "Quality",
            facts.labels_kept > 0,
            f"{counted(facts.labels_kept, 'counterfactual')} kept with a label",
            "Run quality control to decide which labels to keep.",
        ),
        Stage(
            "exports",
            "Exports",
            False,  # never done: the sets can be downloaded again as labels change
            "contrast set, augmentation set, raw judgments",
            "Download the contrast and augmentation sets.",
        ),
    ]


def next_stage(stages: list[Stage]) -> Stage:
    """The first stage not done (exports, the last, is never done)."""
    return next(stage for stage in stages if not stage.done)
