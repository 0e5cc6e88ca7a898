import pytest

from generation.prompts import (
    build_answer,
    build_prompt,
    candidate_from_answers,
    fill_blanks,
    has_leak,
    parse_answers,
)


def test_prompt_format_is_exactly_polyjuice():
    assert build_prompt("It is great for kids.", "negation", "It is [BLANK] great for kids.") == (
        "It is great for kids. <|perturb|> [negation] It is [BLANK] great for kids. [SEP]"
    )
    assert build_answer(["not", ""]) == "not [ANSWER] [EMPTY] [ANSWER]"


@pytest.mark.parametrize(
    "blanked, continuation, expected",
    [
        (
            "It is [BLANK] great for [BLANK].",
            " not [ANSWER] children [ANSWER]<|endoftext|>",
            "It is not great for children.",
        ),
        ("It is [BLANK] for kids.", " [EMPTY] [ANSWER]", "It is for kids."),
        ("[BLANK] It is great for kids.", "Sadly, [ANSWER]", "Sadly, It is great for kids."),
        ("It is great for [BLANK].", "[EMPTY] [ANSWER]", "It is great for."),
        ("I did[BLANK] like it.", "not [ANSWER]", "I did not like it."),
        ("I [BLANK]n't like it.", "did [ANSWER]", "I didn't like it."),
        ("[BLANK]", "The movie is bad. [ANSWER] and then more", "The movie is bad."),
        ("Le [BLANK] était délicieux.", "café [ANSWER]", "Le café était délicieux."),
    ],
)
def test_round_trips(blanked, continuation, expected):
    assert candidate_from_answers(blanked, continuation) == expected


@pytest.mark.parametrize(
    "blanked, continuation",
    [
        ("It is [BLANK] great for [BLANK].", " not [ANSWER]"),  # too few answers
        ("It is [BLANK] great.", " [ANSWER]"),  # empty answer, no [EMPTY]
        ("It is [BLANK] great.", "not"),  # no [ANSWER] at all
        ("It is [BLANK] great.", "[BLANK] [ANSWER]"),  # special token leaks
        ("It is [BLANK] great.", "very [SEP] [ANSWER]"),
        ("It is [BLANK] great.", "[negation] not [ANSWER]"),
        ("It is [BLANK] great.", "so <|perturb|> [ANSWER]"),
        ("[BLANK]", "A [BLANK] day. [ANSWER]"),
        ("It is [BLANK] great.", "not\nreally [ANSWER]"),
    ],
)
def test_malformed_answers_drop_the_candidate(blanked, continuation):
    assert candidate_from_answers(blanked, continuation) is None


def test_extra_answers_after_the_expected_ones_are_ignored():
    assert parse_answers("a [ANSWER] b [ANSWER] c [ANSWER]", 2) == ["a", "b"]


def test_fill_blanks_checks_the_count_and_spacing():
    assert fill_blanks("A [BLANK] B", ["x", "y"]) is None
    assert fill_blanks("Nice [BLANK], right?", [""]) == "Nice, right?"
    assert fill_blanks("[BLANK]", [""]) is None


def test_has_leak():
    assert has_leak("a [BLANK] b") and has_leak("x <|endoftext|>") and has_leak("[lexical] y")
    assert not has_leak("A [bracketed] aside [1].")


@pytest.mark.parametrize(
    "written", ["the [EQ] one", "so [OCT]", "<|im_start|>user", "[ANS", "a ] b"]
)
def test_every_strategy_drops_a_marker_the_model_wrote(written):
    from generation.strategies import FewShotStrategy, NativeStrategy, PromptRequest

    infill = PromptRequest("It is great.", "negation", "It is [BLANK] great.")
    rewrite = PromptRequest("It is great.", "negation", "[BLANK]")
    assert NativeStrategy().parse(infill, f"{written} [ANSWER]") is None
    assert FewShotStrategy().parse(infill, f"{written} [ANSWER]\n") is None
    assert FewShotStrategy().parse(rewrite, f"It is {written} great.\n") is None
    assert NativeStrategy().parse(infill, "not [ANSWER]") == "It is not great."


def test_special_token_texts_of_the_tokenizer_are_leaks():
    from generation.strategies import FewShotStrategy, PromptRequest

    rewrite = PromptRequest("It is great.", "negation", "[BLANK]")
    assert FewShotStrategy().parse(rewrite, "It is <s> great.\n") == "It is <s> great."
    assert FewShotStrategy().parse(rewrite, "It is <s> great.\n", {"<s>", "</s>"}) is None
    assert candidate_from_answers("It is [BLANK].", "fine <pad> [ANSWER]", {"<pad>"}) is None
