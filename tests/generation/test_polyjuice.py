import pytest

from generation.decoding import DecodingConfig, PromptParts
from generation.models import LoadedModel, load_causal_lm
from generation.parsing import ParseCache
from generation.polyjuice import (
    DEFAULT_CODES,
    GENERATOR_NAME,
    PerturbTarget,
    PolyjuiceSettings,
    answer_budgets,
    polyjuice_generate,
)
from generation.prompts import build_prompt
from generation.records import OriginalRecord
from generation.strategies import PromptRequest
from generation.tokens import BLANK, CONTROL_CODES
from tests.generation.tiny_models import tiny_lm_directory

KIDS = OriginalRecord("kids", "It is great for kids.", "positive")
MOVIE = OriginalRecord("movie", "The movie was great.", "positive")
# Short answers keep the random tiny model's decoding quick.
FAST = DecodingConfig(per_prompt=2, max_new_tokens_cap=6)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


@pytest.fixture
def scripted_decoding(monkeypatch) -> list[dict]:
    """Replace decoding: every prompt gets `not [ANSWER]` once per blank, then a malformed
    continuation. Returns the calls decoding received."""
    calls = []

    def fake(lm, prompts, budgets, config, *, answers_needed, stop_at_newline, **kwargs):
        calls.append(
            {
                "prompts": prompts,
                "budgets": budgets,
                "answers_needed": answers_needed,
                "stop_at_newline": stop_at_newline,
            }
        )
        return [[" not [ANSWER]" * needed, "no answer marker"] for needed in answers_needed]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    return calls


def test_settings_reject_unknown_codes_and_list_the_valid_ones():
    with pytest.raises(ValueError, match="Unknown control code") as caught:
        PolyjuiceSettings(codes=("negation", "sarcasm"))

    message = str(caught.value)
    assert "sarcasm" in message
    assert all(code in message for code in CONTROL_CODES)


def test_settings_need_at_least_one_code():
    with pytest.raises(ValueError, match="at least one control code"):
        PolyjuiceSettings(codes=())


def test_default_settings_ask_for_polyjuices_five_codes():
    assert PolyjuiceSettings().codes == DEFAULT_CODES
    assert set(DEFAULT_CODES) <= set(CONTROL_CODES)


class _WordTokenizer:
    """Counts whitespace-separated words as tokens, so budgets can be worked out by hand."""

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [text.split() for text in texts]}


@pytest.mark.parametrize(
    ("blanked", "cap", "expected"),
    [
        # A whole-sentence rewrite: ceil(1.5 * 5 words) + 8 new tokens.
        ("[BLANK]", 160, 16),
        ("[BLANK]", 10, 10),
        # An infill: twice the 1 removed word, 8 per blank, 2 spare.
        ("It is [BLANK] for kids.", 160, 2 * 1 + 8 * 1 + 2),
        ("[BLANK] is [BLANK] for kids.", 160, 2 * 2 + 8 * 2 + 2),
        ("It is great [BLANK] for kids.", 160, 2 * 0 + 8 * 1 + 2),
        ("It is [BLANK] for kids.", 10, 10),
    ],
)
def test_answer_budgets(blanked, cap, expected):
    decoding = DecodingConfig(max_new_tokens_cap=cap)
    request = PromptRequest("It is great for kids.", "negation", blanked)

    assert answer_budgets(_WordTokenizer(), [request], decoding) == [expected]


def test_answer_budgets_of_no_requests_is_empty():
    assert answer_budgets(_WordTokenizer(), [], DecodingConfig()) == []


def test_every_continuation_is_a_candidate_or_counted_malformed(tiny_lm, parses):
    targets = [PerturbTarget(KIDS), PerturbTarget(MOVIE)]
    settings = PolyjuiceSettings(
        codes=("negation", "lexical", "delete"),
        strategy="native",
        random_blank_sets=2,
        decoding=FAST,
    )
    progressed = []

    run = polyjuice_generate(
        targets, settings, lm=tiny_lm, parses=parses, progress=progressed.append
    )

    codes = len(settings.codes)
    # Per original: the whole-sentence blank plus up to two random blank sets, times each code.
    assert run.prompts % codes == 0
    assert len(targets) * codes <= run.prompts <= len(targets) * 3 * codes
    assert sum(progressed) == run.prompts
    assert run.continuations == run.prompts * FAST.per_prompt
    assert run.continuations == len(run.candidates) + run.malformed
    for candidate in run.candidates:
        assert candidate.original_key in {"kids", "movie"}
        assert candidate.generator == GENERATOR_NAME == "polyjuice"
        assert candidate.control_code in settings.codes
        assert BLANK in candidate.prompt
        # Which strategy, engine and model made it travel with every candidate.
        assert candidate.metadata == {"strategy": "native", "engine": "loop", "model": tiny_lm.name}
        assert BLANK not in candidate.text


def test_prompts_are_originals_times_blanked_texts_times_codes(tiny_lm, parses):
    blanked = ("It is [BLANK] for kids.", "[BLANK] is great for kids.")
    targets = [PerturbTarget(KIDS, blanked=blanked), PerturbTarget(MOVIE, blanked=blanked)]
    settings = PolyjuiceSettings(codes=("negation", "lexical", "insert"), decoding=FAST)

    run = polyjuice_generate(targets, settings, lm=tiny_lm, parses=parses)

    assert run.prompts == 2 * 2 * 3
    assert run.continuations == run.prompts * FAST.per_prompt == len(run.candidates) + run.malformed


def test_scripted_answers_become_candidates(tiny_lm, parses, scripted_decoding):
    blanked = "It is [BLANK] great for kids."
    target = PerturbTarget(KIDS, blanked=(blanked,))
    settings = PolyjuiceSettings(codes=("negation", "insert"), strategy="native")

    run = polyjuice_generate([target], settings, lm=tiny_lm, parses=parses)

    assert run.prompts == 2
    assert run.malformed == 2  # one "no answer marker" per prompt
    assert [(c.text, c.control_code) for c in run.candidates] == [
        ("It is not great for kids.", "negation"),
        ("It is not great for kids.", "insert"),
    ]
    for candidate in run.candidates:
        assert candidate.original_key == "kids"
        assert candidate.generator == "polyjuice"
        assert candidate.prompt == blanked
        # Which strategy, engine and model made it travel with every candidate.
        assert candidate.metadata == {"strategy": "native", "engine": "loop", "model": tiny_lm.name}
    (call,) = scripted_decoding
    assert [parts.text for parts in call["prompts"]] == [
        build_prompt(KIDS.text, "negation", blanked),
        build_prompt(KIDS.text, "insert", blanked),
    ]
    assert all(isinstance(parts, PromptParts) for parts in call["prompts"])
    assert call["answers_needed"] == [1, 1]
    assert call["stop_at_newline"] is False


def test_explicit_blanked_texts_are_used_verbatim_and_once(tiny_lm, parses, scripted_decoding):
    blanked = "It is [BLANK]   for kids!"
    target = PerturbTarget(KIDS, blanked=(blanked, blanked))

    run = polyjuice_generate(
        [target], PolyjuiceSettings(codes=("lexical",)), lm=tiny_lm, parses=parses
    )

    assert run.prompts == 1
    assert [c.prompt for c in run.candidates] == [blanked]
    assert [c.text for c in run.candidates] == ["It is not for kids!"]


def test_blanked_text_without_a_blank_is_refused(tiny_lm, parses, scripted_decoding):
    target = PerturbTarget(KIDS, blanked=("It is [BLANK] for kids.", "It is fun for kids."))

    with pytest.raises(ValueError, match="has no \\[BLANK\\]"):
        polyjuice_generate([target], PolyjuiceSettings(), lm=tiny_lm, parses=parses)
    assert scripted_decoding == []


def test_targeted_spans_blank_exactly_those_tokens(tiny_lm, parses, scripted_decoding):
    # Tokens of x: It(0) is(1) great(2) for(3) kids(4) .(5)
    target = PerturbTarget(KIDS, spans=((0, 1), (2, 3)))

    run = polyjuice_generate(
        [target], PolyjuiceSettings(codes=("lexical",)), lm=tiny_lm, parses=parses
    )

    prompts = sorted(c.prompt for c in run.candidates)
    assert prompts == sorted(
        ["[BLANK] is great for kids.", "It is [BLANK] for kids.", "[BLANK] is [BLANK] for kids."]
    )
    assert run.prompts == 3
    assert sorted(c.text for c in run.candidates) == sorted(
        ["not is great for kids.", "It is not for kids.", "not is not for kids."]
    )
    assert sorted(scripted_decoding[0]["answers_needed"]) == [1, 1, 2]


def test_targeted_insertion_point_blanks_between_words(tiny_lm, parses, scripted_decoding):
    target = PerturbTarget(KIDS, spans=((2, 2),))

    run = polyjuice_generate(
        [target], PolyjuiceSettings(codes=("insert",)), lm=tiny_lm, parses=parses
    )

    assert [c.prompt for c in run.candidates] == ["It is [BLANK] great for kids."]
    assert [c.text for c in run.candidates] == ["It is not great for kids."]


def test_target_codes_override_the_settings(tiny_lm, parses, scripted_decoding):
    targets = [
        PerturbTarget(KIDS, blanked=("It is [BLANK] for kids.",), codes=("quantifier",)),
        PerturbTarget(MOVIE, blanked=("The movie was [BLANK].",)),
    ]
    settings = PolyjuiceSettings(codes=("negation", "lexical"))

    run = polyjuice_generate(targets, settings, lm=tiny_lm, parses=parses)

    assert sorted((c.original_key, c.control_code) for c in run.candidates) == [
        ("kids", "quantifier"),
        ("movie", "lexical"),
        ("movie", "negation"),
    ]


def test_random_blank_sets_are_reproducible_with_a_seed(tiny_lm, parses, scripted_decoding):
    settings = PolyjuiceSettings(codes=("lexical",), random_blank_sets=3, seed=7)
    targets = [PerturbTarget(KIDS), PerturbTarget(MOVIE)]

    first = polyjuice_generate(targets, settings, lm=tiny_lm, parses=ParseCache())
    second = polyjuice_generate(targets, settings, lm=tiny_lm, parses=parses)

    assert [c.prompt for c in first.candidates] == [c.prompt for c in second.candidates]
    prompts = [c.prompt for c in first.candidates if c.original_key == "kids"]
    assert prompts[0] == BLANK  # the whole-sentence rewrite comes first
    assert len(prompts) == len(set(prompts))


def test_without_the_sentence_blank_only_span_blanks_are_asked(tiny_lm, parses, scripted_decoding):
    settings = PolyjuiceSettings(codes=("lexical",), sentence_blank=False, random_blank_sets=2)

    polyjuice_generate([PerturbTarget(KIDS)], settings, lm=tiny_lm, parses=parses)

    texts = [parts.text for parts in scripted_decoding[0]["prompts"]]
    assert 1 <= len(texts) <= 2
    assert all(f"[lexical] {BLANK} [SEP]" not in text for text in texts)
