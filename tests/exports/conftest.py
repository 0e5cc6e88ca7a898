"""A campaign labeled through the real worker path, where every export row is known.

Three originals, all labeled "negative", with three counterfactuals each; K = 2.
Workers: `careful` and `steady` pass quality control, `hasty` (5 s per round, every
gold answer wrong) is filtered out, so a third vote on every counterfactual is cast
but does not count. `hasty` works second, so its units are re-queued for `steady`.

    A: a1 kept, flips to positive   a2 kept, stays negative   a3 invalid
    B: b1 kept, flips to positive   b2 split vote, not kept   b3 invalid
    C: c1 kept, stays negative      c2 split vote, not kept   c3 invalid

Contrast set: a1, b1. Augmentation set: A, a1, a2, B, b1 (C has no flip).
"""

from dataclasses import dataclass

import pytest

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.candidates.models import Candidate
from cfannotate.crowd.models import Worker
from cfannotate.quality.services import quality_refresh
from tests.factories import make_labeling_campaign
from tests.quality.conftest import work

VALID, INVALID = True, False
PROVENANCE = {"strategy": "fewshot", "engine": "server", "model": "org/served-7b"}
NEG, POS = "negative", "positive"

# candidate name -> answers of (careful, steady); hasty always says valid, positive.
ANSWERS = {
    "a1": ((VALID, POS), (VALID, POS)),
    "a2": ((VALID, NEG), (INVALID, NEG)),  # C.2: one valid vote is enough
    "a3": ((INVALID, POS), (INVALID, POS)),
    "b1": ((VALID, POS), (VALID, POS)),
    "b2": ((VALID, POS), (VALID, NEG)),
    "b3": ((INVALID, NEG), (INVALID, NEG)),
    "c1": ((VALID, NEG), (VALID, NEG)),
    "c2": ((VALID, NEG), (VALID, POS)),
    "c3": ((INVALID, POS), (INVALID, NEG)),
}


@dataclass
class LabeledCampaign:
    campaign: Campaign
    originals: dict[str, Original]
    candidates: dict[str, Candidate]
    workers: dict[str, Worker]


def _answering(candidates: dict[str, Candidate], which: int):
    by_id = {candidate.id: ANSWERS[name][which] for name, candidate in candidates.items()}
    return lambda candidate_id: by_id[candidate_id]


@pytest.fixture
def labeled(researcher) -> LabeledCampaign:
    campaign = make_labeling_campaign(
        units=3, gold=2, training=1, rounds_per_assignment=3, gold_rounds_per_assignment=2, k=2
    )
    Campaign.objects.filter(pk=campaign.pk).update(owner=researcher)
    campaign.refresh_from_db()
    originals = dict(
        zip("ABC", campaign.originals.filter(units__isnull=False).order_by("id"), strict=True)
    )
    candidates = {
        f"{letter.lower()}{position}": candidate
        for letter, original in originals.items()
        for position, candidate in enumerate(original.candidates.order_by("id"), start=1)
    }
    # Generated candidates record where they were made (generation.polyjuice).
    Candidate.objects.filter(campaign=campaign).update(metadata=PROVENANCE)
    # The classifier in the loop labeled them (Campaign.flip_classifier).
    Candidate.objects.filter(campaign=campaign).update(
        predicted_label=campaign.labels.get(value="negative"),
        predicted_confidence=0.5,
        prediction_source="baseline",
    )
    careful, _ = work(campaign, seconds=30, gold_right=6, real=_answering(candidates, 0))
    hasty, _ = work(campaign, seconds=5, gold_right=0, real=lambda _: (VALID, POS))
    quality_refresh(campaign=campaign)  # hasty's votes do not count: every unit re-queued
    steady, _ = work(campaign, seconds=40, gold_right=6, real=_answering(candidates, 1))
    quality_refresh(campaign=campaign)
    return LabeledCampaign(
        campaign=campaign,
        originals=originals,
        candidates=candidates,
        workers={"careful": careful, "hasty": hasty, "steady": steady},
    )
