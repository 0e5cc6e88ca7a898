"""The overview's stages: where a campaign stands, and the next step, for each state."""

from dataclasses import replace

import pytest

from cfannotate.campaigns import stages
from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.campaigns.stages import StageFacts, campaign_stages, next_stage, stage_facts
from tests.factories import (
    make_assignment,
    make_campaign,
    make_candidate,
    make_labeling_campaign,
    make_original,
)

pytestmark = pytest.mark.django_db

# A campaign one step further along each time: (status, facts) -> the next stage's key.
NEW = StageFacts()
UPLOADED = replace(NEW, originals=7)
GENERATING = replace(UPLOADED, generation_active=True, candidates=3)
IMPORTING = replace(UPLOADED, import_active=True)
GENERATED = replace(UPLOADED, candidates=21, originals_with_candidates=7, units=7)
NOTHING_SELECTED = replace(GENERATED, units=0)
ONE_GOLD = replace(GENERATED, gold_rounds=1, training_rounds=1)
GOLD = replace(GENERATED, gold_rounds=2, training_rounds=1)
INVITED = replace(GOLD, invitations=1, judgments_needed=14)
HALF_JUDGED = replace(INVITED, assignments=2, judgments_done=7)
PLACES_SHORT = replace(HALF_JUDGED, places_short=3)  # a Prolific study out of places
JUDGED = replace(HALF_JUDGED, judgments_done=14)
KEPT = replace(JUDGED, labels_kept=9)

DRAFT, LABELING, PAUSED = CampaignStatus.DRAFT, CampaignStatus.LABELING, CampaignStatus.PAUSED
STATES = [
    (DRAFT, NEW, "data", "Upload the originals"),
    (DRAFT, UPLOADED, "generation", "Generate candidates, or import your own."),
    (DRAFT, GENERATING, "generation", "Generation is running"),
    (DRAFT, IMPORTING, "generation", "Your candidates are being imported"),
    (DRAFT, NOTHING_SELECTED, "review", "No candidate is selected for labeling yet"),
    (DRAFT, GENERATED, "review", "Review the selected candidates"),
    (DRAFT, ONE_GOLD, "gold", "Make gold rounds: each assignment hides 2."),
    (DRAFT, GOLD, "labeling", "Open the campaign for labeling."),
    (PAUSED, INVITED, "labeling", "Labeling is paused: open it again."),
    (LABELING, GOLD, "platforms", "Invite workers"),
    (LABELING, INVITED, "judgments", "Wait for the workers' judgments"),
    (LABELING, HALF_JUDGED, "judgments", "Wait for the workers' judgments"),
    (LABELING, PLACES_SHORT, "judgments", "Add 3 places to the Prolific study, or let it add"),
    (LABELING, JUDGED, "quality", "Run quality control"),
    (LABELING, KEPT, "exports", "Download the contrast and augmentation sets."),
]


@pytest.mark.parametrize(("status", "facts", "key", "action"), STATES)
def test_the_next_step_for_each_state_of_a_campaign(status, facts, key, action):
    campaign = Campaign(status=status, gold_rounds_per_assignment=2)
    step = next_stage(campaign_stages(campaign, facts))
    assert step.key == key
    assert step.action.startswith(action)


def test_workers_who_came_through_the_campaign_link_count_as_invited():
    campaign = Campaign(status=LABELING, gold_rounds_per_assignment=2)
    came = replace(GOLD, assignments=1, judgments_needed=14)
    assert next_stage(campaign_stages(campaign, came)).key == "judgments"


def test_the_stages_are_in_pipeline_order_and_say_what_they_have():
    campaign = Campaign(status=LABELING, gold_rounds_per_assignment=2)
    listed = campaign_stages(campaign, HALF_JUDGED)
    assert [stage.key for stage in listed] == [
        "data", "generation", "review", "gold", "labeling", "platforms", "judgments",
        "quality", "exports",
    ]  # fmt: skip
    summaries = {stage.key: stage.summary for stage in listed}
    assert summaries["data"] == "7 originals"
    assert summaries["generation"] == "21 candidates for all 7 originals"
    assert summaries["gold"] == "2 gold rounds, 1 training round (2 hidden in each assignment)"
    assert summaries["judgments"] == "7 of 14 judgments"
    assert [stage.done for stage in listed][:6] == [True] * 6


def test_the_apps_above_report_their_facts(researcher):
    campaign = make_labeling_campaign(units=2, gold=1, training=1, k=2)
    make_assignment(campaign)
    facts = stage_facts(campaign)
    assert (facts.originals, facts.units, facts.gold_rounds, facts.training_rounds) == (4, 2, 1, 1)
    assert (facts.judgments_needed, facts.judgments_done, facts.assignments) == (4, 0, 1)
    assert facts.candidates == 2 * 3  # the units', not the gold and training rounds'
    assert facts.originals_with_candidates == 2  # the gold and training rounds' have none
    assert not facts.generation_active and facts.invitations == 0 and facts.labels_kept == 0
    assert not facts.import_active


def test_an_import_under_way_is_a_fact_until_it_ends(researcher):
    from cfannotate.candidates.imports import candidate_import_cancel, candidate_import_start

    campaign = make_campaign(owner=researcher)
    original = make_original(campaign)
    job = candidate_import_start(
        campaign=campaign,
        user=researcher,
        file_name="mine.csv",
        content=f"original_id,text\n{original.external_id},Another text.\n".encode(),
    )
    assert stage_facts(campaign).import_active
    candidate_import_cancel(campaign=campaign, import_id=job.id)
    assert not stage_facts(campaign).import_active


def test_a_fresh_campaign_has_only_zeros(researcher):
    campaign = make_campaign(owner=researcher)
    make_candidate(make_original(campaign))
    assert stage_facts(campaign) == StageFacts(
        originals=1, candidates=1, originals_with_candidates=1
    )


def test_a_campaign_generated_for_some_originals_says_for_how_many_and_what_is_left():
    """The demo generates for 3 of its 40 originals: the overview said "58 candidates"
    with a tick, as if every original had its candidates."""
    campaign = Campaign(status=DRAFT, gold_rounds_per_assignment=2)
    some = replace(GENERATED, originals=40, candidates=58, originals_with_candidates=3)
    (generation,) = [s for s in campaign_stages(campaign, some) if s.key == "generation"]
    assert generation.summary == "58 candidates for 3 of 40 originals"
    assert generation.action == (
        "Generate candidates for the originals without any, or import your own."
    )


def test_a_source_reporting_an_unknown_fact_is_refused(researcher, monkeypatch):
    monkeypatch.setattr(stages, "_sources", [lambda campaign: {"originalz": 1}])
    with pytest.raises(ValueError, match="unknown facts: \\['originalz'\\]"):
        stage_facts(make_campaign(owner=researcher))


def test_every_stage_is_done_in_a_section_of_the_campaign():
    from cfannotate.campaigns.sections import SECTION_BY_KEY, STAGE_SECTIONS

    listed = campaign_stages(Campaign(gold_rounds_per_assignment=1), NEW)
    assert {stage.key for stage in listed} == set(STAGE_SECTIONS)
    assert set(STAGE_SECTIONS.values()) <= set(SECTION_BY_KEY)
