"""Shared fixtures: a tiny model, decoding that answers every prompt the same way, and a
campaign with two rule-based generators that need no language model to generate."""

import pytest

from generation.models import load_causal_lm
from tests.factories import make_campaign, make_original
from tests.generation.tiny_models import tiny_lm_directory


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


@pytest.fixture
def scripted(monkeypatch):
    """Decoding answers every prompt the same way, so the stored rows are predictable."""

    def fake(lm, prompts, budgets, config, **kwargs):
        answers = {"[BLANK]": "It is not great for kids. [ANSWER]"}

        def answer(prompt) -> str:
            # Label-directed prompts (generation.label_directed): a quoted replacement, or
            # a rewrite begun with x's first word.
            if prompt.own.endswith('"'):
                return 'not so"'
            if "]: " in prompt.own:
                return " is not great for kids."
            return answers.get(prompt.own.split("] ", 1)[-1].removesuffix(" [SEP]"), "not [ANSWER]")

        return [[answer(p)] * config.per_prompt for p in prompts]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)


@pytest.fixture
def rule_generators():
    return [
        # Negate positive sentences; the rewrite aims at the negative label.
        {
            "name": "causal-negation",
            "source_labels": ["positive"],
            "target_label": "negative",
            "alternative": "never",
        },
        {"name": "lexicon-remove", "classifier": "vader", "min_similarity": None},
    ]


@pytest.fixture
def two_generator_campaign(researcher, rule_generators):
    campaign = make_campaign(owner=researcher, settings={"generators": rule_generators})
    make_original(campaign, text="It is great for kids.", label="positive")
    make_original(campaign, text="The film is not a bad movie.", label="positive")
    make_original(campaign, text="This dull film never finds its rhythm.", label="negative")
    return campaign
