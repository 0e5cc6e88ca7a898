import pytest

from generation.generators import (
    GenerationContext,
    GeneratorOptionsError,
    concept_steered,
    generator_class,
    load_generator,
)
from generation.generators.concept_steered import (
    ConceptSteered,
    concept_clause,
    extract_concepts,
    neutral_prefix,
    noun_chunk_spans,
    pluralize,
    target_labels,
)
from generation.parsing import ParseCache
from generation.records import OriginalRecord
from tests.generation.tiny_models import build_tiny_tokenizer, tiny_lm_directory

FIGURE_1 = "This movie is a loose collection of analogies and plot devices."  # seed 001, Figure 1
TABLE_9 = "I really liked the black and white cinematography."  # no neutral prefix (Table 9)
LABELS = ["positive", "negative"]


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(tiny_lm_directory(tmp_path_factory, "gpt2"))


DOGS = "Two dogs are running through a field of grass."


@pytest.fixture
def endings(monkeypatch, parses):
    """Let a random tiny model end often: a third of its vocabulary ends an output.

    Tokens of the concepts are left out: an end token inside a literal would make it
    unwritable, which real end tokens (end-of-text, newlines) never are.
    """

    def end_ids(lm):
        concept_tokens = {
            token
            for text in (FIGURE_1, DOGS)
            for concept in concepts_of(parses, text)
            for literal in concept_clause(lm.tokenizer, concept).literals
            for token in literal
        }
        return {lm.tokenizer.eos_token_id, *range(0, len(lm.tokenizer), 3)} - concept_tokens

    monkeypatch.setattr(concept_steered, "_end_ids", end_ids)


def concepts_of(parses, text, max_concepts=6):
    return extract_concepts(noun_chunk_spans(parses.parse(text)), max_concepts)


def make_context(parses, progress=None) -> GenerationContext:
    return GenerationContext(parses=parses, device="cpu", progress=progress)


# --- concepts ------------------------------------------------------------------------------------


def test_concepts_are_the_nouns_of_noun_chunks(parses):
    # Figure 1's concepts: no determiners, no sentiment-bearing adjective ("loose").
    texts = [concept.text for concept in concepts_of(parses, FIGURE_1)]
    assert texts == ["movie", "collection", "analogies", "plot devices"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The parser takes "superb" for a noun here; a concept must appear in the output,
        # so it would have kept the review positive.
        ("The acting was superb and the story was thrilling.", ["acting", "story"]),
        ("This film is a disaster, a waste of a good cast.", ["film", "cast"]),
        ("The plot is a mess but Tom Hanks is a delight.", ["plot", "Tom Hanks"]),
        # Compounding stops at an opinion word: the content noun stays.
        ("A horror movie with a great love story.", ["movie", "story"]),
    ],
)
def test_sentiment_bearing_nouns_are_no_concepts(parses, text, expected):
    assert [concept.text for concept in concepts_of(parses, text)] == expected


def test_pronoun_chunks_and_repeats_give_no_extra_concepts(parses):
    assert concepts_of(parses, "It is what it is.") == []
    texts = [c.text for c in concepts_of(parses, "The movie was good and the movies were long.")]
    assert texts == ["movie"]  # "movies" is the same concept
    assert len(concepts_of(parses, FIGURE_1, max_concepts=2)) == 2


def test_surface_forms_cover_number_and_case(parses):
    by_text = {concept.text: concept.forms for concept in concepts_of(parses, FIGURE_1)}
    assert {"analogies", "Analogies", "analogy", "Analogy"} == set(by_text["analogies"])
    assert {"movie", "Movie", "movies", "Movies"} == set(by_text["movie"])
    assert "plot device" in by_text["plot devices"] and "Plot devices" in by_text["plot devices"]
    [dreamcast] = concepts_of(parses, "I had to rent a Dreamcast to play it.")[:1]
    assert dreamcast.text == "Dreamcast" and set(dreamcast.forms) == {"Dreamcast", "dreamcast"}


@pytest.mark.parametrize(
    ("noun", "plural"),
    [("movie", "movies"), ("analogy", "analogies"), ("box", "boxes"), ("day", "days")],
)
def test_pluralize_follows_the_regular_rules(noun, plural):
    assert pluralize(noun) == plural


def test_a_concept_clause_holds_each_form_as_a_word_inside_a_sentence(parses):
    tokenizer = build_tiny_tokenizer("gpt2")
    movie = concepts_of(parses, FIGURE_1)[0]
    clause = concept_clause(tokenizer, movie)
    expected = {
        tuple(tokenizer(" " + form, add_special_tokens=False)["input_ids"]) for form in movie.forms
    }
    assert set(clause.literals) == expected and clause.label == "movie"


# --- prompts and targets -------------------------------------------------------------------------


def test_neutral_prefix_is_the_longest_neutral_one_before_a_concept(parses):
    doc = parses.parse(FIGURE_1)
    concepts = concepts_of(parses, FIGURE_1)
    judged = []

    def no_loose(text):
        judged.append(text)
        return "loose" not in text

    assert neutral_prefix(doc, concepts, no_loose, 4) == "This movie is a"
    # Longest first; at least 4 tokens; the rest must still hold a concept ("plot devices").
    assert judged[0] == "This movie is a loose collection of analogies and"
    assert all(len(parses.parse(text)) >= 4 for text in judged)
    assert neutral_prefix(doc, concepts, lambda text: False, 4) is None


def test_vader_finds_no_neutral_prefix_where_the_paper_found_none(parses):
    pytest.importorskip("vaderSentiment")
    judge = concept_steered.vader_neutral_judge()
    doc = parses.parse(TABLE_9)
    assert neutral_prefix(doc, concepts_of(parses, TABLE_9), judge, 4) is None
    figure = parses.parse(FIGURE_1)
    assert neutral_prefix(figure, concepts_of(parses, FIGURE_1), judge, 4) == "This movie is a"


def test_target_labels_come_from_the_map_or_the_other_campaign_labels():
    assert target_labels("positive", {"positive": "negative"}, ["positive", "neutral"]) == [
        "negative"
    ]
    assert target_labels("a", {}, ["a", "b", "c", "b"]) == ["b", "c"]
    assert target_labels("a", {"x": "y"}, []) == []


# --- settings ------------------------------------------------------------------------------------


def test_registered_with_the_paper_defaults():
    assert generator_class("concept-steered") is ConceptSteered
    settings = load_generator("concept-steered", {"prompt_variant": "1g"}).settings
    search = settings.search_config()
    assert (search.beam_size, search.length_penalty, search.no_repeat_ngram_size) == (20, 0.3, 2)
    assert (search.beta, search.sat_tolerance) == (1.25, 2)
    assert settings.concept_linker is None  # ConceptNet is an opt-in hook


@pytest.mark.parametrize(
    "options",
    [
        {"prompt_variant": "2g"},
        {"prompt_template": "Write {label} about {topic}."},
        {"label_map": {"positive": 1}},
        {"label_map": ["positive", "negative"]},
        {"beam_size": 2, "num_return": 3},
        {"sat_tolerance": -1},
        {"neutral_judge": "roberta"},
        {"concept_linker": "no.such.module:link"},
        {"concept_linker": "tests.generation.generators.test_concept_steered:LABELS"},
        {"beams": 4},
    ],
)
def test_bad_settings_are_refused_with_a_message(options):
    with pytest.raises(GeneratorOptionsError):
        load_generator("concept-steered", options)


def devices_linker(doc):
    """A stand-in for a ConceptNet linker: only "devices" evokes a concept."""
    return [doc[i : i + 1] for i, token in enumerate(doc) if token.text == "devices"]


def test_a_concept_linker_hook_replaces_noun_chunks(parses):
    generator = load_generator(
        "concept-steered",
        {
            "prompt_variant": "1g",
            "concept_linker": "tests.generation.generators.test_concept_steered:devices_linker",
        },
    )
    assert [c.text for c in generator._concepts(parses.parse(FIGURE_1))] == ["devices"]


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty text"),
        ("   ", "empty text"),
        ("Wow, great!", "no verb"),
        ("Das ist ein sehr schlechter Film mit einer dummen Geschichte.", "not English"),
        ("Это очень плохой фильм.", "not English"),
        ("The movie was good. " * 80, "longer than"),
        ("It is what it is.", "no noun chunk"),
    ],
)
def test_bad_input_gives_no_candidate_and_a_reason(parses, monkeypatch, text, reason):
    monkeypatch.setattr(concept_steered, "load_cached", _no_model)
    generator = load_generator("concept-steered", {"prompt_variant": "1g", "label_choices": LABELS})
    done = []
    output = generator.generate(
        [OriginalRecord("x", text, "positive")], context=make_context(parses, done.append)
    )
    assert output.candidates == []
    [skipped] = output.skipped
    assert skipped.original_key == "x" and reason in skipped.reason
    assert sum(done) == 1


def test_no_target_label_and_no_neutral_prefix_are_reasons_too(parses, monkeypatch):
    monkeypatch.setattr(concept_steered, "load_cached", _no_model)
    no_targets = load_generator("concept-steered", {"prompt_variant": "1g"})
    output = no_targets.generate(
        [OriginalRecord("x", FIGURE_1, "negative")], context=make_context(parses)
    )
    assert "no target label for 'negative'" in output.skipped[0].reason
    pytest.importorskip("vaderSentiment")
    np_variant = load_generator(
        "concept-steered", {"prompt_variant": "np", "label_choices": LABELS}
    )
    output = np_variant.generate(
        [OriginalRecord("y", TABLE_9, "positive")], context=make_context(parses)
    )
    assert output.candidates == [] and "no neutral prefix" in output.skipped[0].reason


def _no_model(*args, **kwargs):
    raise AssertionError("no model should be loaded for originals that cannot be perturbed")


# --- decoding with a tiny model ------------------------------------------------------------------


def _generator(tiny_model, **options):
    return load_generator(
        "concept-steered",
        {"model": tiny_model, "label_choices": LABELS, "beam_size": 5, "num_return": 2} | options,
    )


def _holds_every_concept(text, concepts) -> bool:
    return all(any(form in text for form in concept.forms) for concept in concepts)


@pytest.mark.parametrize("variant", ["1g", "plain"])
def test_candidates_keep_every_concept_and_aim_at_the_other_label(
    parses, tiny_model, endings, variant
):
    generator = _generator(tiny_model, prompt_variant=variant)
    originals = [
        OriginalRecord("fig1", FIGURE_1, "negative"),
        OriginalRecord("dogs", DOGS, "positive"),
        OriginalRecord("empty", "", "positive"),
    ]
    done = []
    output = generator.generate(originals, context=make_context(parses, done.append))
    assert sum(done) == len(originals)
    assert [s.original_key for s in output.skipped if s.reason == "empty text"] == ["empty"]
    assert output.candidates
    for record in output.candidates:
        original = next(o for o in originals if o.key == record.original_key)
        concepts = concepts_of(parses, original.text)
        assert record.generator == "concept-steered" and record.control_code == "rewrite"
        assert (
            record.intended_label
            == {"negative": "positive", "positive": "negative"}[original.label]
        )
        assert _holds_every_concept(record.text, concepts)
        assert record.metadata["concepts"] == [c.text for c in concepts]
        assert record.metadata["concepts_kept"] == record.metadata["concepts"]
        assert record.metadata["prompt_variant"] == variant
        assert f"Write a {record.intended_label} sentence" in record.prompt
        if variant == "1g":
            first_word = parses.parse(original.text)[0].text
            assert record.metadata["prefix"] == first_word
            assert record.text.startswith(first_word)


def test_the_np_variant_continues_the_neutral_prefix(parses, tiny_model, endings):
    pytest.importorskip("vaderSentiment")
    generator = _generator(tiny_model, prompt_variant="np")
    output = generator.generate(
        [OriginalRecord("fig1", FIGURE_1, "negative")], context=make_context(parses)
    )
    assert output.candidates
    for record in output.candidates:
        assert record.text.startswith("This movie is a")
        assert _holds_every_concept(record.text, concepts_of(parses, FIGURE_1))


def test_each_other_label_gets_its_own_prompt(parses, tiny_model, endings):
    generator = _generator(
        tiny_model,
        prompt_variant="1g",
        label_choices=["pos", "neg", "mixed"],
        label_descriptions={"neg": "scathing", "mixed": "lukewarm"},
    )
    output = generator.generate(
        [OriginalRecord("fig1", FIGURE_1, "pos")], context=make_context(parses)
    )
    prompts = {record.intended_label: record.prompt for record in output.candidates}
    assert set(prompts) <= {"neg", "mixed"} and prompts
    assert all(("scathing" if label == "neg" else "lukewarm") in p for label, p in prompts.items())
    mapped = _generator(tiny_model, prompt_variant="1g", label_map={"pos": "neg"})
    output = mapped.generate(
        [OriginalRecord("fig1", FIGURE_1, "pos")], context=make_context(parses)
    )
    assert {record.intended_label for record in output.candidates} == {"neg"}


def test_an_original_whose_searches_never_finish_is_skipped(parses, tiny_model, monkeypatch):
    # Only end-of-text ends an output and the budget is one token: no output can hold a concept.
    generator = _generator(tiny_model, prompt_variant="1g", max_new_tokens_cap=1)
    done = []
    output = generator.generate(
        [OriginalRecord("fig1", FIGURE_1, "negative")], context=make_context(parses, done.append)
    )
    assert output.candidates == []
    assert "no output held every concept" in output.skipped[0].reason and sum(done) == 1


def test_a_prompt_longer_than_the_model_context_is_a_reason(parses, tiny_model):
    # The tiny GPT-2 attends to 128 positions; this steering prompt alone takes more.
    generator = _generator(tiny_model, prompt_variant="1g", prompt_template="Be {label}. " * 60)
    output = generator.generate(
        [OriginalRecord("fig1", FIGURE_1, "negative")], context=make_context(parses)
    )
    assert output.candidates == []
    assert "no room in the model's 128 tokens" in output.skipped[0].reason
