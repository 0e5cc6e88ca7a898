"""The adapter: a campaign's generator entries checked and mapped; labels of results mapped."""

import pytest

from cfannotate.candidates import adapter
from cfannotate.candidates.adapter import entries_from_settings
from cfannotate.core.exceptions import InvalidInput
from generation.edits import Edit
from generation.postprocess import AnnotatedCandidate
from generation.records import CandidateRecord
from generation.relationship import Relationship

SENTIMENT = ["negative", "positive"]


def problems(generators, targeting=None, labels=SENTIMENT) -> dict[str, list[str]]:
    with pytest.raises(InvalidInput) as caught:
        entries_from_settings(generators, label_values=labels, targeting=targeting)
    return caught.value.fields


def test_no_entries_means_polyjuice_with_its_defaults():
    (entry,) = entries_from_settings([], label_values=SENTIMENT)
    assert (entry.name, entry.options, entry.fluency_model) == ("polyjuice", {}, None)


def test_entries_keep_their_order_options_and_fluency_model():
    entries = entries_from_settings(
        [
            {"name": "lexicon-remove", "classifier": "vader", "fluency_model": "/lm"},
            {"name": "polyjuice", "codes": ["negation"]},
        ],
        label_values=SENTIMENT,
    )
    assert [(e.position, e.name) for e in entries] == [(0, "lexicon-remove"), (1, "polyjuice")]
    assert entries[0].options == {"classifier": "vader"} and entries[0].fluency_model == "/lm"
    assert entries[1].load().settings.codes == ("negation",)


def test_every_problem_is_named_by_its_entry_and_option():
    fields = problems(
        [
            {"name": "gpt-magic"},
            "polyjuice",
            {"name": "lexicon-remove", "colour": "red", "min_valence": 9},
            {"name": "polyjuice", "num_beams": 2},  # with the default per_prompt of 3
            {"name": "polyjuice", "fluency_model": 7},
        ]
    )
    assert set(fields) == {
        "generators[0].name",
        "generators[1]",
        "generators[2].colour",
        "generators[2].min_valence",
        "generators[3].num_beams",
        "generators[4].fluency_model",
    }
    assert "choose one of: polyjuice" in fields["generators[0].name"][0]
    assert "unknown option" in fields["generators[2].colour"][0]
    assert "min_valence must be in (0, 4]" in fields["generators[2].min_valence"][0]
    assert "per_prompt=3 > num_beams=2" in fields["generators[3].num_beams"][0]


def test_options_valid_only_together_blame_the_combination_not_each():
    entries = entries_from_settings(
        [{"name": "polyjuice", "num_beams": 2, "per_prompt": 2}], label_values=SENTIMENT
    )
    assert entries[0].options == {"num_beams": 2, "per_prompt": 2}
    fields = problems([{"name": "polyjuice", "num_beams": 2, "per_prompt": 2, "temperature": -1}])
    assert set(fields) == {"generators[0].temperature"}


@pytest.mark.parametrize("generators", ["polyjuice", {"name": "polyjuice"}, 3])
def test_generators_must_be_a_list(generators):
    assert set(problems(generators)) == {"generators"}


def test_labels_named_by_options_must_be_the_campaigns_defaults_included():
    # causal-negation's defaults convert "causal" into "no_relationship": not sentiment labels.
    fields = problems([{"name": "causal-negation"}])
    assert set(fields) == {"generators[0].source_labels", "generators[0].target_label"}
    assert "'no_relationship'" in fields["generators[0].target_label"][0]
    assert "its labels are negative, positive" in fields["generators[0].target_label"][0]
    fields = problems([{"name": "concept-steered", "label_map": {"positive": "neutral"}}])
    assert "'neutral'" in fields["generators[0].label_map"][0]
    entries_from_settings(
        [{"name": "causal-negation"}],
        label_values=["no_relationship", "causal", "conditional_causal", "correlational"],
    )


def test_the_campaign_fills_in_label_choices_and_polyjuice_slices():
    concept, polyjuice, lexicon = entries_from_settings(
        [{"name": "concept-steered"}, {"name": "polyjuice"}, {"name": "lexicon-remove"}],
        label_values=SENTIMENT,
        targeting={"slices": ["negation"], "code": "negation"},
    )
    assert concept.options["label_choices"] == SENTIMENT
    assert polyjuice.options == {"slices": ["negation"], "slice_code": "negation"}
    assert lexicon.options == {}  # neither option exists there
    (own,) = entries_from_settings(
        [{"name": "polyjuice", "slices": ["preposition"]}],
        label_values=SENTIMENT,
        targeting={"slices": ["negation"]},
    )
    assert own.options == {"slices": ["preposition"]}  # the entry's own slices win


@pytest.mark.parametrize(
    "targeting, field",
    [
        ({"slices": ["sarcasm"]}, "targeting.slices"),
        ({"slices": "negation"}, "targeting.slices"),
        ({"slices": ["negation"], "code": "sarcasm"}, "targeting.code"),
        ({"slices": ["negation"], "colour": 1}, "targeting.colour"),
        (["negation"], "targeting"),
    ],
)
def test_bad_targeting_is_named_once(targeting, field):
    fields = problems([{"name": "polyjuice"}], targeting=targeting)
    assert field in fields and all(name.startswith("targeting") for name in fields)


def _annotated(original_id: int, label: str | None, generator: str = "lexicon-remove"):
    record = CandidateRecord(
        original_key=str(original_id),
        text="A film.",
        generator=generator,
        control_code="remove",
        intended_label=label,
    )
    relationship = Relationship(str(original_id), frozenset(), frozenset(), frozenset(), "delete")
    edit = Edit(ops=(), token_distance=1, edit_ratio=0.2).to_dict()
    return AnnotatedCandidate(record, "delete", edit, relationship, None)


def test_intended_labels_map_to_the_campaigns_labels_by_any_spelling(campaign):
    results = [_annotated(1, "negative"), _annotated(1, "Positive"), _annotated(1, None)]
    labels = adapter.intended_labels(campaign, results)
    assert {name: label.value for name, label in labels.items()} == {
        "negative": "negative",
        "Positive": "positive",
    }


def test_an_intended_label_the_campaign_lacks_is_an_error(campaign):
    with pytest.raises(InvalidInput, match="lexicon-remove: neutral") as caught:
        adapter.intended_labels(campaign, [_annotated(1, "neutral")])
    assert "The campaign's labels are negative, positive" in caught.value.message
