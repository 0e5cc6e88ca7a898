"""Generating candidates for a campaign stores annotated rows; re-runs add nothing twice."""

import pytest

from cfannotate.candidates import adapter
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.candidates.services import candidates_generate
from cfannotate.core.exceptions import InvalidInput
from tests.factories import make_campaign, make_original


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(
        owner=researcher,
        settings={
            "generators": [
                {"name": "polyjuice", "codes": ["negation"], "blank_sets": 1, "per_prompt": 2}
            ],
        },
    )
    make_original(campaign, text="It is great for kids.", label="positive")
    return campaign


def test_generation_stores_annotated_candidates(campaign, tiny_lm, scripted):
    summary = candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    rows = list(Candidate.objects.filter(campaign=campaign))
    assert summary.stored == len(rows) >= 1
    texts = {row.text for row in rows}
    assert "It is not great for kids." in texts
    for row in rows:
        assert row.generator == "polyjuice"
        assert row.metadata["requested_code"] == "negation"
        assert row.edit["relationship"]["base"] == str(row.original_id)
        assert row.fluency_full is not None
        expected = (
            CandidateStatus.FILTERED if row.metadata["dropped_by"] else CandidateStatus.GENERATED
        )
        assert row.status == expected
    negated = next(row for row in rows if row.text == "It is not great for kids.")
    assert negated.control_code == "negation"
    campaign.refresh_from_db()
    assert campaign.status == "review"


def test_generating_again_adds_nothing_twice(campaign, tiny_lm, scripted):
    first = candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    second = candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert second.stored == 0
    assert second.already_known == first.stored
    assert Candidate.objects.filter(campaign=campaign).count() == first.stored


def test_a_campaign_without_originals_is_refused(researcher, tiny_lm):
    empty = make_campaign(owner=researcher)
    with pytest.raises(InvalidInput, match="no originals"):
        candidates_generate(campaign=empty, lm=tiny_lm, fluency_lm=tiny_lm)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"name": "polyjuice", "colour": "red"}, "Unknown Polyjuice settings: colour"),
        ({"name": "polyjuice", "codes": ["sarcasm"]}, "Unknown control code"),
        ({"name": "polyjuice", "per_prompt": 0}, "per_prompt"),
        ({"name": "polyjuice", "temperature": "hot"}, "Invalid Polyjuice settings"),
    ],
)
def test_bad_generator_settings_are_named(researcher, entry, message):
    campaign = make_campaign(owner=researcher, settings={"generators": [entry]})
    with pytest.raises(InvalidInput, match=message):
        adapter.pipeline_settings(campaign)


def test_settings_follow_the_campaign(researcher):
    campaign = make_campaign(
        owner=researcher,
        settings={
            "fluency_threshold": 7.5,
            "generators": [
                {
                    "name": "polyjuice",
                    "codes": ["lexical", "insert"],
                    "num_beams": 4,
                    "per_prompt": 3,
                    "model": "/models/polyjuice",
                }
            ],
        },
    )
    settings = adapter.pipeline_settings(campaign, device="cpu")
    assert settings.fluency_threshold == 7.5
    assert settings.model == "/models/polyjuice" and settings.device == "cpu"
    assert settings.polyjuice.codes == ("lexical", "insert")
    assert settings.polyjuice.decoding.num_beams == 4
    assert settings.polyjuice.decoding.do_sample is False


def test_generate_command_reports_bad_input(db, capsys):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="No campaign with id 424242"):
        call_command("generate", 424242)


def test_targeting_blanks_only_the_sliced_pattern(researcher, tiny_lm, monkeypatch):
    """§4.1: with a preposition slice, only matching originals are perturbed, on that word."""
    campaign = make_campaign(
        owner=researcher,
        settings={
            "targeting": {"slices": ["preposition"], "code": "resemantic"},
            "generators": [{"name": "polyjuice", "per_prompt": 1}],
        },
    )
    surfboard = make_original(campaign, text="His surfboard is beneath him.")
    make_original(campaign, text="It rained.")
    seen = []

    def fake(lm, prompts, budgets, config, **kwargs):
        seen.extend(prompts)
        return [["lying on [ANSWER]"]] * len(prompts)

    monkeypatch.setattr("generation.polyjuice.generate_continuations", fake)
    candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert [p.own for p in seen] == [" [resemantic] His surfboard is [BLANK] him. [SEP]"]
    assert list(Candidate.objects.values_list("original_id", "text")) == [
        (surfboard.id, "His surfboard is lying on him.")
    ]


def test_targeting_with_an_unknown_slice_is_refused(researcher, tiny_lm):
    campaign = make_campaign(owner=researcher, settings={"targeting": {"slices": ["sarcasm"]}})
    make_original(campaign)
    with pytest.raises(InvalidInput, match="Invalid targeting"):
        candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)


def test_originals_are_tagged_with_their_slices(campaign):
    from cfannotate.candidates.services import originals_tag_slices

    make_original(campaign, text="We may not see two dogs in Paris.")
    assert originals_tag_slices(campaign=campaign) == 2
    tags = dict(campaign.originals.values_list("text", "slice_tags"))
    assert {"modal_verb", "negation", "quantifier_or_number", "named_entity"} <= set(
        tags["We may not see two dogs in Paris."]
    )
    assert "preposition" in tags["It is great for kids."]
