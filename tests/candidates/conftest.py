"""Shared fixtures: a tiny model and decoding that answers every prompt the same way."""

import pytest

from generation.models import load_causal_lm
from tests.generation.tiny_models import tiny_lm_directory


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


@pytest.fixture
def scripted(monkeypatch):
    """Decoding answers every prompt the same way, so the stored rows are predictable."""

    def fake(lm, prompts, budgets, config, **kwargs):
        answers = {"[BLANK]": "It is not great for kids. [ANSWER]"}
        return [
            [answers.get(p.own.split("] ", 1)[-1].removesuffix(" [SEP]"), "not [ANSWER]")]
            * config.per_prompt
            for p in prompts
        ]

    monkeypatch.setattr("generation.polyjuice.generate_continuations", fake)
