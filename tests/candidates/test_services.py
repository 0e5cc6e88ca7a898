"""Generating candidates with a campaign's generators stores annotated rows; re-runs add
nothing twice."""

import pytest

from cfannotate.campaigns import generator_settings
from cfannotate.campaigns.models import Campaign, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.imports import candidates_import
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
        assert row.metadata["edit_type"] == "negation"
        assert row.source == "generated" and row.intended_label is None
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
    "entry, field, message",
    [
        ({"name": "polyjuice", "colour": "red"}, "generators[0].colour", "unknown option"),
        ({"name": "polyjuice", "codes": ["sarcasm"]}, "generators[0].codes", "Unknown control"),
        ({"name": "polyjuice", "per_prompt": 0}, "generators[0].per_prompt", "at least 1"),
        ({"name": "polyjuice", "temperature": "hot"}, "generators[0].temperature", "a number"),
        ({"name": "gpt-magic"}, "generators[0].name", "Unknown generator 'gpt-magic'"),
    ],
)
def test_bad_generator_settings_are_named_before_generation(researcher, entry, field, message):
    """A campaign saved before validation existed (or edited in the database) still fails
    with the entry's field named, before any model loads."""
    campaign = make_campaign(owner=researcher)
    make_original(campaign)
    Campaign.objects.filter(pk=campaign.pk).update(generators=[entry])
    campaign.refresh_from_db()
    with pytest.raises(InvalidInput) as caught:
        candidates_generate(campaign=campaign, lm=_RefusedModel(), fluency_lm=_RefusedModel())
    assert message in " ".join(caught.value.fields[field])


class _RefusedModel:
    """Stands in for an LM that must never be used."""

    def __getattr__(self, name):
        raise AssertionError(f"a model was used ({name}) although the settings are invalid")


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
                    "fluency_model": "/models/plain-lm",
                }
            ],
        },
    )
    (entry,) = generator_settings.generator_entries(campaign)
    generator = entry.load()
    assert generator.settings.model == "/models/polyjuice"
    polyjuice = generator.settings.polyjuice()
    assert polyjuice.codes == ("lexical", "insert")
    assert polyjuice.decoding.num_beams == 4 and polyjuice.decoding.do_sample is False
    settings = adapter.pipeline_settings(campaign, entry, device="cpu")
    assert settings.fluency_threshold == 7.5 and settings.device == "cpu"
    assert settings.fluency_model == "/models/plain-lm"


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

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert [p.own for p in seen] == [" [resemantic] His surfboard is [BLANK] him. [SEP]"]
    assert list(Candidate.objects.values_list("original_id", "text")) == [
        (surfboard.id, "His surfboard is lying on him.")
    ]


def test_targeting_with_an_unknown_slice_is_refused(researcher):
    with pytest.raises(InvalidInput, match="Invalid generator settings") as caught:
        make_campaign(owner=researcher, settings={"targeting": {"slices": ["sarcasm"]}})
    assert "Invalid targeting" in caught.value.fields["targeting.slices"][0]


def test_two_generators_each_record_what_they_made(two_generator_campaign, tiny_lm):
    campaign = two_generator_campaign
    summary = candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    rows = {
        (row.original.text, row.generator): row
        for row in Candidate.objects.filter(campaign=campaign).select_related("intended_label")
    }
    assert set(rows) == {
        ("It is great for kids.", "causal-negation"),
        ("The film is not a bad movie.", "lexicon-remove"),
        ("This dull film never finds its rhythm.", "lexicon-remove"),
    }
    negated = rows["It is great for kids.", "causal-negation"]
    assert negated.text == "It is not great for kids."
    assert negated.intended_label.value == "negative"
    assert negated.metadata["edit_type"] == "negation" and negated.control_code == "negation"
    # Removing the negation flips the label; removing a modifier only weakens it.
    unnegated = rows["The film is not a bad movie.", "lexicon-remove"]
    assert (unnegated.text, unnegated.intended_label.value) == (
        "The film is a bad movie.",
        "negative",
    )
    weakened = rows["This dull film never finds its rhythm.", "lexicon-remove"]
    assert weakened.text == "This film never finds its rhythm." and weakened.intended_label is None
    for row in rows.values():
        assert row.edit["relationship"]["base"] == str(row.original_id)
        assert row.fluency_full is not None and row.source == "generated"
    assert [(g.name, g.candidates, g.skipped) for g in summary.generators] == [
        ("causal-negation", 1, 2),
        ("lexicon-remove", 2, 1),
    ]
    assert summary.stored == 3


def test_every_generator_sees_the_originals_label(researcher, rule_generators, tiny_lm):
    """Generators that convert one label (causal-negation: source_labels) skip the others."""
    campaign = make_campaign(
        owner=researcher,
        settings={"generators": rule_generators[:1]},
    )
    make_original(campaign, text="It is awful for kids.", label="negative")
    summary = candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert summary.stored == 0 and summary.generators[0].skipped == 1


def test_two_generators_run_twice_store_nothing_twice(two_generator_campaign, tiny_lm):
    first = candidates_generate(campaign=two_generator_campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    second = candidates_generate(campaign=two_generator_campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert (first.stored, second.stored, second.already_known) == (3, 0, 3)
    assert Candidate.objects.filter(campaign=two_generator_campaign).count() == 3


def test_an_empty_generator_list_means_polyjuice(researcher, tiny_lm, scripted):
    campaign = make_campaign(owner=researcher)
    make_original(campaign, text="It is great for kids.")
    candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert set(Candidate.objects.values_list("generator", flat=True)) == {"polyjuice"}


def test_a_generator_that_fails_to_start_is_named(researcher, tiny_lm):
    """Options valid in form but failing when the generator is built (a missing hook)."""
    campaign = make_campaign(
        owner=researcher,
        settings={
            "generators": [{"name": "concept-steered", "concept_linker": "no_such_module:linker"}]
        },
    )
    make_original(campaign)
    with pytest.raises(InvalidInput, match="concept-steered cannot start") as caught:
        candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    assert "no_such_module" in caught.value.fields["generators[0]"][0]
    assert not Candidate.objects.exists()


# -- importing the researcher's own candidates -------------------------------------------


@pytest.fixture
def import_campaign(researcher):
    campaign = make_campaign(owner=researcher)
    for external_id, text, label in [
        ("s01", "It is great for kids.", "positive"),
        ("s02", "The plot is dull and slow.", "negative"),
    ]:
        Original.objects.create(
            campaign=campaign,
            external_id=external_id,
            text=text,
            label=campaign.labels.get(value=label),
        )
    return campaign


GOOD_CSV = (
    "original_id,text,intended_label,author\n"
    "s01,It is not great for kids.,negative,ann\n"
    "s01,It is great for adults.,,ann\n"
    "s02,The plot is lively and quick.,pos,bob\n"
    # A rewrite too far from x to be a generated counterfactual; imported, it is labeled.
    "s02,Cats sleep all afternoon in the warm sun.,,bob\n"
)


def test_import_annotates_rows_like_generated_ones(
    import_campaign, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    with django_capture_on_commit_callbacks(execute=True):
        summary = candidates_import(
            campaign=import_campaign, file_name="mine.csv", content=GOOD_CSV.encode()
        )
    assert (summary.imported, summary.kept, summary.originals) == (4, 4, 2)
    rows = {row.text: row for row in Candidate.objects.select_related("intended_label")}
    negated = rows["It is not great for kids."]
    assert (negated.source, negated.generator, negated.status) == (
        "imported",
        "imported",
        "generated",
    )
    assert negated.control_code == "negation" and negated.intended_label.value == "negative"
    assert negated.edit["relationship"]["added"] == ["not"]
    assert negated.metadata["edit_type"] == "" and negated.metadata["columns"] == {"author": "ann"}
    assert negated.metadata["row"] == "row 2" and negated.fluency_full is None
    assert rows["It is great for adults."].intended_label is None
    assert rows["The plot is lively and quick."].intended_label.value == "positive"  # alias
    assert rows["Cats sleep all afternoon in the warm sun."].control_code == "global"
    import_campaign.refresh_from_db()
    assert import_campaign.status == "review"
    task = DBTaskResult.objects.get()
    assert task.args_kwargs["args"] == [import_campaign.id]


def test_imported_candidates_are_never_dropped_by_the_sanity_filters(import_campaign):
    broken = (
        "original_id,text\n"
        "s01,It is great for\n"  # cut off
        "s02,The plot is dull dull dull and slow.\n"  # repeats itself
        "s02,Plot dull and slow.\n"  # no verb
    )

    summary = candidates_import(
        campaign=import_campaign, file_name="broken.csv", content=broken.encode()
    )

    assert (summary.imported, summary.kept) == (3, 3)
    for row in Candidate.objects.all():
        assert row.status == "generated" and row.metadata["dropped_by"] is None


def test_imported_candidates_become_labeling_units(import_campaign):
    from cfannotate.labeling.tasks import select_units
    from cfannotate.labeling.units import units_create_from_selection

    candidates_import(campaign=import_campaign, file_name="mine.csv", content=GOOD_CSV.encode())
    summary = units_create_from_selection(campaign=import_campaign)
    assert (summary.originals, summary.units, summary.candidates) == (2, 2, 4)
    assert set(Candidate.objects.values_list("status", flat=True)) == {"selected"}
    assert select_units.func(import_campaign.id) == 0  # the queued task finds nothing left


def test_every_bad_row_is_reported_and_nothing_imported(import_campaign):
    from cfannotate.campaigns.services import MAX_TEXT_CHARS
    from tests.factories import make_candidate, make_gold_round, make_unit

    make_candidate(import_campaign.originals.get(external_id="s01"), text="It is bad for kids.")
    gold = make_gold_round(import_campaign).original
    in_unit = make_unit(make_original(import_campaign)).original
    content = (
        "\n".join(
            [
                '{"original_id": "s01", "text": "It is fine for kids."}',
                '{"original_id": "s99", "text": "Unknown original."}',
                '{"original_id": "s01", "text": "   "}',
                '{"original_id": "s01", "text": "it is  GREAT for kids."}',
                '{"original_id": "s01", "text": "It is awful.", "intended_label": "meh"}',
                '{"original_id": "s01", "text": "It is fine for kids."}',
                '{"original_id": "s01", "text": "It is bad for kids."}',
                '{"original_id": "s02", "text": "' + "x" * (MAX_TEXT_CHARS + 1) + '"}',
                '{"original_id": "s02", "text": "Nul\\u0000here."}',
                f'{{"original_id": "{gold.external_id}", "text": "A gold one."}}',
                f'{{"original_id": "{in_unit.external_id}", "text": "Too late."}}',
                '{"text": "No id."}',
                '{"original_id": ["s01"], "text": 5}',
            ]
        ).encode()
        + b'\n{"original_id": "s02", "text": }\n'
    )
    with pytest.raises(InvalidInput) as caught:
        candidates_import(campaign=import_campaign, file_name="mine.jsonl", content=content)
    fields = caught.value.fields
    assert caught.value.message == "13 rows are invalid; nothing was imported."
    expected = {
        "line 2": "No original 's99'",
        "line 3": "text: Missing or empty",
        "line 4": "The same as the original",
        "line 5": "Unknown label 'meh'; expected one of negative, positive",
        "line 6": "The same counterfactual as line 1",
        "line 7": "Already a candidate of this original",
        "line 8": f"the limit is {MAX_TEXT_CHARS:,}",
        "line 9": "NUL character",
        "line 10": "original of a gold round",
        "line 11": "already has labeling units",
        "line 12": "original_id: Missing",
        "line 13": "original_id: Must be text",
        "line 14": "Not valid JSON",
    }
    assert list(fields) == list(expected)  # in file order
    for where, message in expected.items():
        assert message in " ".join(fields[where]), (where, fields[where])
    assert Candidate.objects.filter(source="imported").count() == 0


def test_importing_the_same_file_twice_is_refused_the_second_time(import_campaign):
    candidates_import(campaign=import_campaign, file_name="a.csv", content=GOOD_CSV.encode())
    with pytest.raises(InvalidInput, match="4 row"):
        candidates_import(campaign=import_campaign, file_name="a.csv", content=GOOD_CSV.encode())
    assert Candidate.objects.count() == 4


def test_import_errors_beyond_the_reported_number_are_counted(import_campaign):
    content = "original_id,text\n" + "s99,x\n" * 60
    with pytest.raises(InvalidInput) as caught:
        candidates_import(campaign=import_campaign, file_name="a.csv", content=content.encode())
    assert caught.value.message.endswith("Only the first 50 are listed.")
    assert len(caught.value.fields) == 50


def test_import_scores_fluency_when_asked(import_campaign, tiny_lm):
    summary = candidates_import(
        campaign=import_campaign,
        file_name="a.csv",
        content=GOOD_CSV.encode(),
        score_fluency=True,
        fluency_lm=tiny_lm,
    )
    rows = list(Candidate.objects.all())
    assert all(row.fluency_full is not None for row in rows)
    kept = [row for row in rows if row.status == "generated"]
    assert summary.kept == len(kept)
    assert all(row.metadata["dropped_by"] for row in rows if row.status == "filtered")


def test_import_without_fluency_loads_no_model(import_campaign, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an LM was loaded for an import that did not ask for fluency")

    monkeypatch.setattr("generation.models.load_cached", refuse)
    summary = candidates_import(
        campaign=import_campaign, file_name="a.csv", content=GOOD_CSV.encode()
    )
    assert summary.imported == 4


def test_import_with_an_unloadable_fluency_model_is_a_clear_error(import_campaign):
    Campaign.objects.filter(pk=import_campaign.pk).update(
        generators=[{"name": "polyjuice", "fluency_model": "/no/such/model"}]
    )
    import_campaign.refresh_from_db()
    with pytest.raises(InvalidInput, match="/no/such/model cannot be loaded") as caught:
        candidates_import(
            campaign=import_campaign,
            file_name="a.csv",
            content=GOOD_CSV.encode(),
            score_fluency=True,
        )
    assert "score_fluency" in caught.value.fields
    assert not Candidate.objects.exists()
