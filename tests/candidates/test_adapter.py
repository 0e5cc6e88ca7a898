"""The adapter: a campaign's generator entries checked and mapped; labels of results mapped."""

import pytest

from cfannotate.campaigns import generator_settings
from cfannotate.campaigns.generator_settings import entries_from_settings
from cfannotate.candidates import adapter
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
    assert fields["generators[2].min_valence"] == ["Must be above 0 and at most 4."]
    assert "per_prompt=3 > num_beams=2" in fields["generators[3].num_beams"][0]


def test_options_valid_only_together_blame_the_combination_not_each():
    entries = entries_from_settings(
        [{"name": "polyjuice", "num_beams": 2, "per_prompt": 2}], label_values=SENTIMENT
    )
    assert entries[0].options == {"num_beams": 2, "per_prompt": 2}
    fields = problems([{"name": "polyjuice", "num_beams": 2, "per_prompt": 2, "temperature": -1}])
    assert set(fields) == {"generators[0].temperature"}


@pytest.mark.parametrize(
    ("entry", "option"),
    [
        ({"strategy": "zzz"}, "strategy"),
        ({"seed": 2**70}, "seed"),
        ({"seed": -1}, "seed"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -1}, "batch_size"),
        ({"max_blanks": 0}, "max_blanks"),
        ({"max_blanks": -3}, "max_blanks"),
        ({"blank_sets": -1}, "blank_sets"),
        ({"num_beams": 0}, "num_beams"),
        ({"per_prompt": 10**6}, "per_prompt"),
        ({"top_p": 0}, "top_p"),
        ({"temperature": 10**400}, "temperature"),
        ({"name": "concept-steered", "prune_factor": 0}, "prune_factor"),
        ({"name": "lexicon-replace", "proposal_count": 10**9}, "proposal_count"),
    ],
)
def test_options_no_run_can_use_are_refused_naming_the_option(entry, option):
    fields = problems([{"name": "polyjuice", **entry}])
    assert set(fields) == {f"generators[0].{option}"}


def test_an_unknown_strategy_and_a_seed_out_of_range_say_what_is_accepted():
    fields = problems([{"name": "polyjuice", "strategy": "zzz", "seed": 2**32}])
    assert fields["generators[0].strategy"] == [
        "Unknown prompting strategy 'zzz'; choose auto, native, fewshot."
    ]
    assert fields["generators[0].seed"] == ["Must be at least 0 and at most 4294967295."]
    (entry,) = entries_from_settings(
        [{"name": "polyjuice", "strategy": "fewshot", "seed": 2**32 - 1}], label_values=SENTIMENT
    )
    assert entry.options["seed"] == 2**32 - 1


@pytest.mark.django_db  # the catalog is kept in the shared cache (a database table)
def test_every_numeric_option_of_every_generator_is_bounded_around_its_default():
    for info in generator_settings.generator_catalog():
        for option, default in info.defaults.items():
            if isinstance(default, int | float) and not isinstance(default, bool):
                bounds = generator_settings.OPTION_BOUNDS[option]
                assert bounds.problem(default) is None, (info.name, option)


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


# ---------------------------------------------------------------- engine and inference server

SERVER = {"engine": "server", "server_url": "http://gpu-box:8000/v1", "server_model": "org/m-7b"}


@pytest.fixture
def site_server(settings):
    """A site whose generation runs on an inference server unless a campaign says otherwise."""
    settings.GENERATION_ENGINE = "server"
    settings.INFERENCE_SERVER = {
        "url": "http://inference.lab:8000/v1",
        "model": "org/site-model",
        "api": "chat",
        "api_key_env": "LAB_KEY",
        "concurrency": 4,
        "timeout": 30.0,
        "retries": None,  # unset: the generator's own default
    }
    settings.INFERENCE_SERVER_API_KEY_ENVS = ["LAB_KEY"]
    return settings


def test_an_entry_takes_the_sites_engine_and_server_for_what_it_leaves_out(site_server):
    from generation.engines import ServerConfig

    plain, own_model, in_process = entries_from_settings(
        [
            {"name": "polyjuice"},
            {"name": "polyjuice", "server_model": "org/other", "seed": 1},
            {"name": "polyjuice", "engine": "loop", "seed": 2},
        ],
        label_values=SENTIMENT,
    )
    assert plain.options == {
        "engine": "server",
        "server_url": "http://inference.lab:8000/v1",
        "server_model": "org/site-model",
        "server_api": "chat",
        "server_api_key_env": "LAB_KEY",
        "server_concurrency": 4,
        "server_timeout": 30.0,
    }
    assert plain.server == ServerConfig(
        base_url="http://inference.lab:8000/v1",
        model="org/site-model",
        api="chat",
        api_key_env="LAB_KEY",
        concurrency=4,
        timeout=30.0,
        retries=3,
    )
    assert own_model.server.model == "org/other"  # the entry's own option wins
    # An in-process engine takes none of the server's defaults (they would be refused).
    assert in_process.options == {"engine": "loop", "seed": 2} and in_process.server is None
    lexicon = entries_from_settings([{"name": "lexicon-remove"}], label_values=SENTIMENT)
    assert lexicon[0].options == {}  # no engine option there


def test_with_the_default_engine_nothing_is_filled_in():
    (entry,) = entries_from_settings([{"name": "polyjuice"}], label_values=SENTIMENT)
    assert entry.options == {} and entry.server is None
    (served,) = entries_from_settings([{"name": "polyjuice", **SERVER}], label_values=SENTIMENT)
    assert served.server.base_url == "http://gpu-box:8000/v1" and served.server.retries == 3


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"server_url": "ftp://gpu-box/v1"}, "server_url", "must start with http://"),
        ({"server_url": ""}, "server_url", "must start with http://"),
        ({"server_model": " "}, "server_model", "server_model is required"),
        ({"server_api": "grpc"}, "server_api", "server_api must be one of"),
        ({"server_concurrency": 0}, "server_concurrency", "at least 1"),
        ({"server_concurrency": "many"}, "server_concurrency", ""),
        ({"server_timeout": -1}, "server_timeout", "Must be above 0"),
        ({"server_retries": -1}, "server_retries", "Must be at least 0"),
        ({"server_colour": "red"}, "server_colour", "unknown option"),
        ({"engine": "vllm"}, "engine", "Unknown engine 'vllm'"),
        ({"engine": "loop"}, "server_url", "choose engine 'server'"),
    ],
)
def test_each_bad_server_option_is_named_by_itself(changes, field, says):
    fields = problems([{"name": "polyjuice", **SERVER, **changes}])
    assert set(fields) == {f"generators[0].{field}"}, fields
    assert says in fields[f"generators[0].{field}"][0]


def test_a_bad_url_and_a_missing_model_are_both_named():
    fields = problems([{"name": "polyjuice", "engine": "server", "server_url": "gpu-box"}])
    assert set(fields) == {"generators[0].server_url", "generators[0].server_model"}


def test_the_key_variable_must_be_one_the_site_allows(settings):
    settings.INFERENCE_SERVER_API_KEY_ENVS = ["LAB_KEY"]
    entries_from_settings(
        [{"name": "polyjuice", **SERVER, "server_api_key_env": "LAB_KEY"}], label_values=SENTIMENT
    )
    # The key is sent to the entry's URL: a researcher may not pick the site's own secrets,
    # and a key pasted in by mistake is refused without being repeated.
    for name in ("CFANNOTATE_SECRET_KEY", "hf_PastedKeyNotAName123"):
        fields = problems([{"name": "polyjuice", **SERVER, "server_api_key_env": name}])
        (message,) = fields["generators[0].server_api_key_env"]
        assert "allowed: LAB_KEY" in message and name not in message
    # Refused whatever the engine: it would be stored and shown all the same.
    fields = problems([{"name": "polyjuice", "server_api_key_env": "hf_PastedKeyNotAName123"}])
    assert set(fields) == {"generators[0].server_api_key_env"}


def test_the_settings_page_choices_and_defaults(site_server, db):  # facts in the db cache
    engines, apis = generator_settings.engine_choices()
    assert [name for name, _ in engines] == ["auto", "loop", "continuous", "server"]
    assert [name for name, _ in apis] == ["auto", "completions", "chat"]
    defaults = generator_settings.engine_defaults()
    assert defaults["engine"] == "server" and defaults["server_model"] == "org/site-model"
    assert defaults["server_retries"] == 3  # the generator's own, where the site sets none


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
