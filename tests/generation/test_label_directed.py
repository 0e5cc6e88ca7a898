"""Label-directed prompts: what they show the model, how answers parse, what Polyjuice asks."""

import pytest

from generation.label_directed import (
    TEMPLATE_EXAMPLES,
    LabelDirectedStrategy,
    LabelExample,
    changed_span,
    examples_for,
    first_blank_only,
    tail_blank,
    target_labels,
)
from generation.models import LoadedModel, load_causal_lm
from generation.parsing import ParseCache
from generation.polyjuice import PerturbTarget, PolyjuiceSettings, polyjuice_generate
from generation.records import OriginalRecord
from generation.strategies import PromptRequest
from generation.tokens import BLANK
from tests.generation.tiny_models import tiny_lm_directory

KIDS = OriginalRecord("kids", "It is great for kids.", "positive")
SENTIMENT = ("negative", "positive")
OWN = LabelExample("The tea was hot.", "positive", "The tea was cold.", "negative", "lexical")


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


def request(blanked: str, code: str = "lexical") -> PromptRequest:
    return PromptRequest(KIDS.text, code, blanked, "positive", "negative")


def test_the_campaigns_own_pairs_come_first_then_the_template_in_the_tasks_spelling():
    own_only = examples_for(SENTIMENT, [OWN, OWN])
    assert own_only == (OWN, OWN)  # two pairs of its own: the template is not needed
    topped_up = examples_for(("Negative", "Positive"), [OWN])
    assert topped_up[0] == OWN and len(topped_up) > 1
    assert {e.source_label for e in topped_up[1:]} <= {"Negative", "Positive"}
    assert examples_for(("a", "b")) == ()  # no template for an unknown label set


def test_every_template_example_is_a_flip_with_a_code():
    for labels, examples in TEMPLATE_EXAMPLES.items():
        for example in examples:
            assert example.source_label != example.target_label
            assert {example.source_label, example.target_label} <= labels
            assert example.code and example.source != example.target


def test_target_labels_are_the_other_labels_in_order():
    assert target_labels("neutral", ["entailment", "neutral", "contradiction"]) == [
        "entailment",
        "contradiction",
    ]
    assert target_labels("positive", ["positive"]) == []


def test_only_the_first_blank_stays_blank():
    text = "I loved this movie, the acting was superb."
    blanked = "I loved [BLANK], the [BLANK] was superb."
    assert first_blank_only(text, blanked) == "I loved [BLANK], the acting was superb."
    assert first_blank_only(text, BLANK) == BLANK
    # An insertion point between two words is a blank too.
    assert (
        first_blank_only("Go pick it up.", "Go [BLANK] pick [BLANK] it up.")
        == "Go [BLANK] pick it up."
    )
    assert first_blank_only(text, "I [BLANK] this movie, the acting was superb.") == (
        "I [BLANK] this movie, the acting was superb."
    )


def test_changed_span_is_the_one_region_that_differs():
    assert changed_span("The soup tasted great.", "The soup tasted awful.") == (
        "The soup tasted",
        "great",
        "awful",
    )
    assert changed_span("It is not good.", "It is good.") == ("It is", "not", "")
    assert changed_span("A b c d.", "X b c Y.") is None  # two regions
    assert changed_span("Same.", "Same.") is None


def test_a_prompt_never_shows_a_worked_pair_of_its_own_original():
    kids = LabelExample(KIDS.text, "positive", "It is awful for kids.", "negative", "lexical")
    strategy = LabelDirectedStrategy((OWN, kids))

    own_x = strategy.split(request(BLANK)).shared
    other_x = strategy.split(PromptRequest(" The tea was hot. ", "lexical", BLANK, "positive",
                                           "negative")).shared  # fmt: skip

    assert "It is awful for kids." not in own_x and "The tea was cold." in own_x
    assert "The tea was cold." not in other_x and "It is awful for kids." in other_x
    assert strategy.shared() == strategy.shared("Another sentence.")  # both examples


def test_a_rewrite_prompt_names_both_labels_and_begins_with_the_first_word():
    strategy = LabelDirectedStrategy((OWN,))
    parts = strategy.split(request(BLANK, "negation"))
    assert parts.shared.startswith("positive: The tea was hot.\nnegative [lexical]: The tea was")
    assert parts.context == "positive: It is great for kids.\n"
    assert parts.own == "negative [negation]: It"
    assert strategy.parse(request(BLANK), " is bad for kids.\npositive: more") == (
        "It is bad for kids."
    )
    assert strategy.parse(request(BLANK), "\n") is None  # nothing written
    assert strategy.parse(request(BLANK), " is [EQ] for kids.") is None  # a bracket


def test_a_replacement_prompt_quotes_the_span_and_ends_at_its_closing_quote():
    strategy = LabelDirectedStrategy((OWN,))
    blanked = "It is [BLANK] for kids."
    parts = strategy.split(request(blanked))
    assert parts.own == 'negative [lexical], replacing "great": It is "'
    # The quoted form of the example is shown too.
    assert 'negative [lexical], replacing "hot": The tea was "cold"' in parts.shared
    assert strategy.parse(request(blanked), 'awful" for kids.') == "It is awful for kids."
    assert strategy.parse(request(blanked), '" for kids.') == "It is for kids."  # a deletion
    # Without its closing quote, a replacement followed by x's own ending still counts.
    assert strategy.parse(request(blanked), "awful for kids.") == "It is awful for kids."
    assert strategy.parse(request(blanked), "awful and") is None  # never closed
    assert strategy.parse(request(blanked), "for kids.") is None  # nothing before the ending
    assert strategy.parse(request(blanked), 'aw|ful"') is None  # a pipe
    assert strategy.answers_needed(request(blanked)) == 0 and strategy.stops_at_newline


def test_a_random_blank_set_becomes_a_rewrite_from_its_first_blank_on():
    text = "This movie is just plain bad."
    assert tail_blank(text, "This movie [BLANK] plain [BLANK].") == "This movie [BLANK]"
    assert (
        tail_blank(text, "This movie is just plain [BLANK].") == "This movie is just plain [BLANK]"
    )
    # A first blank at the start of x: the next blank's start, with x's words before it.
    assert tail_blank(text, "[BLANK] is just [BLANK] bad.") == "This movie is just [BLANK]"
    assert tail_blank(text, "[BLANK] is just plain bad.") is None  # the whole-sentence rewrite
    assert tail_blank(text, BLANK) is None
    assert tail_blank(text, "Another [BLANK].") is None  # not x's blanks


def test_a_rewrite_from_a_point_on_begins_with_xs_words_before_it():
    strategy = LabelDirectedStrategy((OWN,))
    quoted = OriginalRecord("q", '"Jaws" is great for kids.', "positive")
    tail = PromptRequest(quoted.text, "lexical", '"Jaws" is [BLANK]', "positive", "negative")
    assert strategy.split(tail).own == 'negative [lexical]: "Jaws" is'
    # x's own quotes stay; a closing quote that opens nowhere (the quoted examples' form) goes.
    assert strategy.parse(tail, " awful for kids.") == '"Jaws" is awful for kids.'
    assert strategy.parse(tail, ' awful for kids."') == '"Jaws" is awful for kids.'
    assert strategy.parse(tail, "\n") is None
    kids = request("It is [BLANK]")
    assert strategy.split(kids).own == "negative [lexical]: It is"
    assert strategy.parse(kids, ' "bad"') == 'It is "bad"'  # quotes the model opened and closed


def test_a_pair_tasks_context_is_shown_before_x():
    strategy = LabelDirectedStrategy()
    nli = PromptRequest("A dog runs.", "lexical", BLANK, "entailment", "contradiction", "A dog.")
    assert strategy.split(nli).context == "(A dog.)\nentailment: A dog runs.\n"


@pytest.fixture
def label_decoding(monkeypatch) -> list[dict]:
    """Decoding that answers a replacement with `awful"` and a rewrite with ` is bad.`."""
    calls = []

    def fake(lm, prompts, budgets, config, *, answers_needed, stop_at_newline, **kwargs):
        calls.append({"prompts": prompts, "stop_at_newline": stop_at_newline})
        return [
            ['awful" tail' if p.own.endswith('"') else " is bad for kids."] * config.per_prompt
            for p in prompts
        ]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    return calls


def test_polyjuice_asks_each_original_for_the_other_label(tiny_lm, label_decoding):
    settings = PolyjuiceSettings(
        codes=("lexical",), strategy="fewshot", label_choices=SENTIMENT, random_blank_sets=0
    )
    target = PerturbTarget(KIDS, blanked=("It is [BLANK] for kids.", BLANK))

    run = polyjuice_generate([target], settings, lm=tiny_lm, parses=ParseCache())

    assert [c.text for c in run.candidates[::3]] == ["It is awful for kids.", "It is bad for kids."]
    assert {c.intended_label for c in run.candidates} == {"negative"}
    assert {c.metadata["strategy"] for c in run.candidates} == {"label"}
    (call,) = label_decoding
    assert call["stop_at_newline"] is True
    assert all("negative [lexical]" in p.own for p in call["prompts"])


def test_random_blanks_are_rewrites_from_a_point_on_and_targeted_ones_stay_quoted(
    tiny_lm, label_decoding
):
    settings = PolyjuiceSettings(
        codes=("lexical",), strategy="fewshot", label_choices=SENTIMENT, random_blank_sets=3
    )
    random_target = PerturbTarget(
        OriginalRecord("r", "The acting in this film was superb.", "positive")
    )
    targeted = PerturbTarget(KIDS, spans=((2, 3),))  # "great"

    run = polyjuice_generate([random_target, targeted], settings, lm=tiny_lm, parses=ParseCache())

    prompts = {c.prompt for c in run.candidates if c.original_key == "r"}
    assert BLANK in prompts and len(prompts) > 1
    # Every random blank set ended in one blank that runs to the end of x, after x's words.
    assert all(p == BLANK or (p.endswith(BLANK) and p.count(BLANK) == 1) for p in prompts)
    assert {c.prompt for c in run.candidates if c.original_key == "kids"} == {
        "It is [BLANK] for kids."
    }
    owns = [p.own for p in label_decoding[0]["prompts"]]
    assert 'negative [lexical], replacing "great": It is "' in owns


def test_without_label_choices_or_when_turned_off_prompts_stay_label_agnostic(
    tiny_lm, label_decoding
):
    target = PerturbTarget(KIDS, blanked=(BLANK,))
    for settings in (
        PolyjuiceSettings(codes=("lexical",), strategy="fewshot"),
        PolyjuiceSettings(
            codes=("lexical",), strategy="fewshot", label_choices=SENTIMENT, label_directed=False
        ),
    ):
        polyjuice_generate([target], settings, lm=tiny_lm, parses=ParseCache())
    assert [call["prompts"][0].own for call in label_decoding] == ["[lexical]", "[lexical]"]


def test_a_model_trained_on_the_polyjuice_format_keeps_its_own_prompts(tiny_lm, label_decoding):
    settings = PolyjuiceSettings(codes=("lexical",), strategy="native", label_choices=SENTIMENT)
    target = PerturbTarget(KIDS, blanked=("It is [BLANK] for kids.",))
    polyjuice_generate([target], settings, lm=tiny_lm, parses=ParseCache())
    assert label_decoding[0]["prompts"][0].own.endswith("[SEP]")
