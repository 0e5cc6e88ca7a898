import pytest

from generation.blanks import blanked_text, targeted_blank_sets
from generation.parsing import ParseCache, load_nlp
from generation.records import OriginalRecord
from generation.slicing import (
    SLICES,
    get_slice,
    slice_names,
    slicing_function,
    tag_slices,
    targets_for_slices,
)
from generation.tokens import CONTROL_CODES, NEGATION, QUANTIFIER, RESEMANTIC, SHUFFLE

# name -> (a sentence with the pattern, the span texts expected there, one without it).
# A slice registered without an entry here fails test_every_slice_has_examples.
EXAMPLES: dict[str, tuple[str, list[str], str]] = {
    "preposition": ("His surfboard is beneath him.", ["beneath"], "The dog barked loudly."),
    "quantifier_or_number": (
        "Three dogs ran across all five fields.",
        ["Three", "all five"],
        "The dog barked loudly.",
    ),
    "negation": (
        "I didn't like it and nobody came.",
        ["didn't", "nobody"],
        "I liked it and everybody came.",
    ),
    "comparative": (
        "She is taller than him and more careful than anyone.",
        ["taller", "more careful"],
        "She is tall and careful.",
    ),
    "superlative": (
        "This is the best movie and the most boring one.",
        ["best", "most boring"],
        "This is a good movie.",
    ),
    "named_entity": (
        "Barack Obama visited Paris on Monday.",
        ["Barack Obama", "Paris"],
        "The dog barked loudly.",
    ),
    "modal_verb": ("You should go and we might come.", ["should", "might"], "You went home."),
    "pronoun": ("She gave him her book.", ["She", "him", "her"], "The dog barked loudly."),
    "temporal": (
        "Yesterday we met at noon, and soon we left.",
        ["Yesterday", "noon", "soon"],
        "The dog barked loudly.",
    ),
    "conditional": (
        "If it rains, we stay home unless you call.",
        ["If", "unless"],
        "When did you go?",
    ),
    "adjective": ("A very good and cheap hotel.", ["very good", "cheap"], "The dog barked loudly."),
    "subject_object": ("John hit Mary.", ["John", "Mary"], "The dog barked loudly."),
}


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


@pytest.fixture(scope="module")
def parses(nlp):
    return ParseCache(nlp)


def span_texts(doc, spans):
    return [doc[start:end].text for start, end in spans]


def test_every_slice_has_examples():
    assert set(EXAMPLES) == set(slice_names())


@pytest.mark.parametrize("name", slice_names())
def test_slice_matches_its_pattern_and_not_a_sentence_without_it(nlp, name):
    positive, expected, negative = EXAMPLES[name]
    slice_ = get_slice(name)
    assert span_texts(nlp(positive), slice_(nlp(positive))) == expected
    assert slice_(nlp(negative)) == []
    assert slice_.code in CONTROL_CODES
    assert slice_.description


def test_preposition_blank_reads_like_the_paper(nlp):
    doc = nlp("His surfboard is beneath him.")
    spans = get_slice("preposition")(doc)
    assert spans == [(3, 4)]
    [blank_set] = targeted_blank_sets(doc, spans)
    assert blanked_text(doc, blank_set) == "His surfboard is [BLANK] him."


def test_spans_keep_contractions_whole_but_leave_clitics_outside(nlp):
    doc = nlp("I didn't go to John's house.")
    [negation] = get_slice("negation")(doc)
    assert (
        blanked_text(doc, targeted_blank_sets(doc, [negation])[0])
        == "I [BLANK] go to John's house."
    )
    [entity] = get_slice("named_entity")(doc)
    assert doc[entity[0] : entity[1]].text == "John"


def test_number_span_takes_its_modifiers_and_a_preposition_inside_a_word_is_skipped(nlp):
    doc = nlp("More than 20 people paid $5 for a state-of-the-art phone.")
    numbers = span_texts(doc, get_slice("quantifier_or_number")(doc))
    assert numbers == ["More than 20", "$5"]
    assert span_texts(doc, get_slice("preposition")(doc)) == ["for"]


def test_quantifier_and_superlative_tell_most_apart(nlp):
    doc = nlp("Most people liked the most expensive hotel.")
    assert span_texts(doc, get_slice("quantifier_or_number")(doc)) == ["Most"]
    assert span_texts(doc, get_slice("superlative")(doc)) == ["most expensive"]


def test_subject_object_finds_the_comparison_pair_for_entity_order(nlp):
    doc = nlp("Is Mary taller than John?")
    assert span_texts(doc, get_slice("subject_object")(doc)) == ["Mary", "John"]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "!!! ??? ...", "Café ☕ «déjà vu» — naïve!!!", "“Ünïcödé”, (a)—[b]; {c}…", "🙂🙂"],
)
def test_odd_text_does_not_crash(nlp, text):
    doc = nlp(text)
    for slice_ in SLICES.values():
        for start, end in slice_(doc):
            assert 0 <= start < end <= len(doc)
    assert len(tag_slices([doc])) == 1


def test_tag_slices_names_the_matching_slices_in_registry_order(nlp):
    docs = [nlp("His surfboard is beneath him."), nlp("The dog barked loudly.")]
    assert tag_slices(docs) == [["preposition", "pronoun", "subject_object"], []]
    assert tag_slices(docs, ["negation", "preposition"]) == [["preposition"], []]
    with pytest.raises(ValueError, match="Unknown slicing function"):
        tag_slices(docs, ["prepositions"])


def test_targets_for_slices_skip_non_matching_originals_and_use_suggested_codes(parses):
    originals = [
        OriginalRecord("a", "His surfboard is beneath him.", "entailment", context="A man surfs."),
        OriginalRecord("b", "The dog barked loudly.", "neutral"),
        OriginalRecord("c", "I did not see three cats.", "contradiction"),
    ]
    targets = targets_for_slices(
        originals, parses, ["preposition", "negation", "quantifier_or_number"]
    )
    assert [target.original.key for target in targets] == ["a", "c"]
    surf, cats = targets
    assert surf.original is originals[0]
    assert surf.spans == ((3, 4),)
    assert surf.codes == (RESEMANTIC,)
    assert cats.codes == (NEGATION, QUANTIFIER)
    assert span_texts(parses.parse(cats.original.text), cats.spans) == ["not", "three"]


def test_targets_for_slices_union_of_spans_and_code_override(parses):
    originals = [OriginalRecord("q", "Is Mary taller than John?", "duplicate")]
    [target] = targets_for_slices(
        originals, parses, ["subject_object", "named_entity"], code=SHUFFLE
    )
    assert target.spans == ((1, 2), (4, 5))  # both slices found Mary and John: kept once
    assert target.codes == (SHUFFLE,)


def test_targets_for_slices_reject_bad_codes_and_names(parses):
    originals = [OriginalRecord("a", "His surfboard is beneath him.", "x")]
    with pytest.raises(ValueError, match="Unknown control code"):
        targets_for_slices(originals, parses, ["preposition"], code="surprise")
    with pytest.raises(ValueError, match=r"Unknown slicing function 'adverb'.*preposition"):
        targets_for_slices(originals, parses, ["adverb"])
    with pytest.raises(ValueError, match="at least one"):
        targets_for_slices(originals, parses, [])


def test_registering_rejects_duplicates_and_unknown_codes():
    with pytest.raises(ValueError, match="already registered"):
        slicing_function("preposition", "again", code=RESEMANTIC)(lambda doc: [])
    with pytest.raises(ValueError, match="Unknown control code"):
        slicing_function("new_slice", "bad code", code="surprise")
    assert "new_slice" not in SLICES
