import pytest

from generation.strategies import (
    INFILL_EXAMPLES,
    REWRITE_EXAMPLES,
    FewShotStrategy,
    NativeStrategy,
    PromptRequest,
    strategy_for,
)
from generation.tokens import CONTROL_CODES
from tests.generation.tiny_models import build_tiny_tokenizer


def test_every_code_has_worked_examples_that_round_trip():
    from generation.prompts import fill_blanks

    assert set(INFILL_EXAMPLES) == set(REWRITE_EXAMPLES) == set(CONTROL_CODES)
    for source, blanked, answers in INFILL_EXAMPLES.values():
        filled = fill_blanks(blanked, ["" if a == "[EMPTY]" else a for a in answers])
        assert filled and filled != source


def test_native_prompt_and_parse():
    request = PromptRequest("It is great for kids.", "negation", "It is [BLANK] great for kids.")
    strategy = NativeStrategy()
    assert strategy.render(request).endswith("[negation] It is [BLANK] great for kids. [SEP]")
    parts = strategy.split(request)
    assert (parts.shared, parts.context) == ("", "It is great for kids. <|perturb|>")
    assert strategy.parse(request, " not [ANSWER]") == "It is not great for kids."


def test_fewshot_infill_shows_examples_and_ends_with_the_query():
    request = PromptRequest("It is great for kids.", "lexical", "It is [BLANK] for kids.")
    prompt = FewShotStrategy().render(request)
    lines = prompt.split("\n")
    # One worked example per control code, then the query.
    assert len(lines) == len(CONTROL_CODES) + 1
    for code in CONTROL_CODES:
        assert any(
            line.startswith(INFILL_EXAMPLES[code][0]) and f"[{code}]" in line for line in lines[:-1]
        )
    assert lines[-1] == "It is great for kids. <|perturb|> [lexical] It is [BLANK] for kids. [SEP]"
    parts = FewShotStrategy().split(request)
    other = FewShotStrategy().split(PromptRequest("A cat sat.", "negation", "A [BLANK] sat."))
    assert parts.shared == other.shared  # the examples are computed once for every prompt
    assert parts.context == "It is great for kids. <|perturb|>"
    assert parts.own == " [lexical] It is [BLANK] for kids. [SEP]"
    assert FewShotStrategy().parse(request, " awful [ANSWER]\nThe next line") == (
        "It is awful for kids."
    )


def test_fewshot_rewrite_for_whole_sentence_blanks():
    request = PromptRequest("It is great for kids.", "negation", "[BLANK]")
    prompt = FewShotStrategy().render(request)
    assert prompt.endswith("Sentence: It is great for kids.\n[negation]")
    assert prompt.count("Sentence:") == len(CONTROL_CODES) + 1
    assert FewShotStrategy().parse(request, " It is not great for kids.\nSentence: x") == (
        "It is not great for kids."
    )
    assert FewShotStrategy().parse(request, " \n") is None
    assert FewShotStrategy().parse(request, " It is [BLANK].") is None


def test_auto_picks_native_only_for_tokenizers_that_know_the_format():
    from transformers import AutoTokenizer  # noqa: F401  (tokenizer classes registered)

    assert strategy_for("auto", build_tiny_tokenizer("gpt2")).name == "native"
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    plain = Tokenizer(models.BPE())
    plain.pre_tokenizer = pre_tokenizers.ByteLevel()
    plain_tokenizer = PreTrainedTokenizerFast(tokenizer_object=plain)
    assert strategy_for("auto", plain_tokenizer).name == "fewshot"
    assert strategy_for("auto", plain_tokenizer, "uw-hai/polyjuice").name == "native"
    with pytest.raises(ValueError, match="Unknown prompting strategy"):
        strategy_for("creative", build_tiny_tokenizer("gpt2"))
