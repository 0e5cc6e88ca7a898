"""Tests of the lexicon remove / replace generators (RM-CT and REP-CT) and their parts."""

import numpy as np
import pytest
import torch

from generation.fluency import sentence_logprobs
from generation.generators import (
    GenerationContext,
    GeneratorOptionsError,
    generator_class,
    load_generator,
)
from generation.generators.lexicon import LexiconRemove, LexiconReplace
from generation.generators.lexicon.opinion_lexicon import (
    INFLECTED_TAGS,
    NEGATIVE,
    NEUTRAL_ADVERBS,
    POSITIVE,
    is_profane,
    opinion_lexicon,
    replacement_words,
)
from generation.generators.lexicon.replacement import (
    PrefixScorer,
    RankedReplacement,
    propose_words,
    rank_replacements,
    same_part_of_speech,
)
from generation.generators.lexicon.rewrite import removal_span, rewrite
from generation.generators.lexicon.sensitivity import (
    BaselineScorer,
    ClassifierUnavailable,
    VaderScorer,
    gold_probabilities,
    relative_drops,
)
from generation.generators.lexicon.terms import NEGATION, WORD, find_terms
from generation.models import load_causal_lm
from generation.parsing import ParseCache
from generation.records import OriginalRecord
from tests.generation.tiny_models import KINDS, tiny_lm_directory


@pytest.fixture(scope="module")
def parses():
    return ParseCache()


@pytest.fixture
def context(parses):
    return GenerationContext(parses=parses, device="cpu")


@pytest.fixture(scope="module")
def lexicon():
    return opinion_lexicon(1.0)


@pytest.fixture(scope="module", params=KINDS)
def tiny_lm(request, tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


def original(key, text, label, context=""):
    return OriginalRecord(key=key, text=text, label=label, context=context)


REVIEWS = [
    original("r1", "In and of itself it is not a bad film.", "positive"),
    original("r2", "It is badly directed, badly acted and boring.", "negative"),
    original("r3", "The food was delicious and the staff were friendly.", "positive"),
    original("r4", "I did not enjoy the terrible ending.", "negative"),
]


# -- the opinion lexicon --------------------------------------------------------------------


def test_lexicon_gives_vader_words_their_sign_and_leaves_negations_out(lexicon):
    assert lexicon.polarity("superb") == POSITIVE
    assert lexicon.polarity("boring") == NEGATIVE
    assert lexicon.polarity("film") is None
    assert lexicon.polarity("no") is None  # VADER rates it -1.2; it is a negation here


def test_min_valence_keeps_only_stronger_words():
    strict = opinion_lexicon(2.0)
    assert opinion_lexicon(1.0).polarity("well") == POSITIVE  # VADER: 1.1
    assert strict.polarity("well") is None
    assert strict.polarity("great") == POSITIVE  # VADER: 3.1
    assert strict.positive < opinion_lexicon(1.0).positive


def test_replacement_words_leave_out_profanity_and_its_inflections(lexicon):
    assert lexicon.polarity("crap") == NEGATIVE
    # Listed as is, as an inflection of a listed word, and with a doubled consonant.
    assert is_profane("crap") and is_profane("jerks") and is_profane("crappy")
    assert not is_profane("terrible")
    pool = replacement_words(1.0, NEGATIVE)
    assert {"crap", "jerks", "crappy", "damned"}.isdisjoint(pool)
    assert "terrible" in pool
    assert set(pool) <= lexicon.negative
    assert list(pool) == sorted(pool)


# -- every lexicon word and its inflections (issue #21) --------------------------------------


def _adverbs_of(adjective: str, wordnet) -> list[str]:
    """The -ly adverbs made from `adjective` that exist (WordNet knows them as adverbs)."""
    spellings = [adjective + "ly"]
    if adjective.endswith("y"):
        spellings.append(adjective[:-1] + "ily")  # happy -> happily
    if adjective.endswith("le"):
        spellings.append(adjective[:-1] + "y")  # horrible -> horribly
    if adjective.endswith("ic"):
        spellings.append(adjective + "ally")  # tragic -> tragically
    if adjective.endswith("e"):
        spellings.append(adjective[:-1] + "ly")  # true -> truly
    if adjective.endswith("ll"):
        spellings.append(adjective + "y")  # full -> fully
    return [spelling for spelling in spellings if wordnet.knows(spelling, "adv")]


def _forms_of_every_lexicon_word(lexicon) -> list[tuple[str, str, str]]:
    """(form, Penn tag, lexicon word) for every word and every form LemmInflect's dictionary
    gives it (plural, -ed, -ing, -s, comparative, superlative), and its -ly adverbs."""
    from lemminflect import getAllInflections

    from generation.generators.wordnet import default_wordnet

    wordnet = default_wordnet()
    forms = []
    for word in sorted(lexicon.positive | lexicon.negative):
        inflected = getAllInflections(word)
        forms += [(form, tag, word) for tag, spelled in inflected.items() for form in spelled]
        if "JJ" in inflected or not inflected:
            forms += [(adverb, "RB", word) for adverb in _adverbs_of(word, wordnet)]
        if not inflected:
            forms.append((word, "JJ", word))
    return forms


def test_every_lexicon_word_and_each_of_its_inflections_has_the_words_polarity(lexicon):
    forms = _forms_of_every_lexicon_word(lexicon)
    assert len(forms) > 10_000
    tags = {tag for _, tag, _ in forms}
    assert {"NNS", "VBD", "VBG", "VBZ", "JJR", "JJS", "RB"} <= tags
    wrong = []
    for form, tag, word in forms:
        # A form VADER rates itself keeps its own rating; the rest take their word's.
        expected = lexicon.polarity(form) or lexicon.polarity(word)
        if form in NEUTRAL_ADVERBS:
            expected = None
        if lexicon.form_polarity(form, tag) != expected:
            wrong.append((form, tag, word))
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "form", "polarity"),
    [
        ("The critics kept abhorring the remake.", "abhorring", NEGATIVE),  # -ing
        ("The producers robbed the audience.", "robbed", NEGATIVE),  # -ed
        ("The heroine motivates everyone.", "motivates", POSITIVE),  # -s
        ("The cast suffered agonies on set.", "agonies", NEGATIVE),  # plural
        ("The sequel is jauntier than the original.", "jauntier", POSITIVE),  # comparative
        ("It was the weariest plot of the year.", "weariest", NEGATIVE),  # superlative
        ("The dialogue was disastrously written.", "disastrously", NEGATIVE),  # -ly
    ],
)
def test_inflected_forms_vader_does_not_list_are_opinion_words_in_a_sentence(
    parses, lexicon, text, form, polarity
):
    assert lexicon.polarity(form) is None  # only the inflection can find it
    terms = {term.text: term for term in find_terms(parses.parse(text), lexicon)}
    assert terms[form].polarity == polarity and terms[form].replaceable


def test_neutral_adverbs_are_not_opinion_words(parses, lexicon):
    doc = parses.parse("The sequel will likely be greatly changed.")
    assert find_terms(doc, lexicon) == []


@pytest.mark.parametrize("tag", sorted(INFLECTED_TAGS))
@pytest.mark.parametrize("polarity", [POSITIVE, NEGATIVE])
def test_replacements_for_an_inflected_slot_take_its_inflection(lexicon, tag, polarity):
    pool = replacement_words(1.0, polarity, tag)
    assert pool and list(pool) == sorted(pool)
    assert all(lexicon.form_polarity(word, tag) == polarity for word in pool)
    assert not any(is_profane(word) for word in pool)


def test_replacement_pools_by_slot():
    assert "hated" in replacement_words(1.0, NEGATIVE, "VBD")
    assert "hate" not in replacement_words(1.0, NEGATIVE, "VBD")
    assert "sadder" in replacement_words(1.0, NEGATIVE, "JJR")
    assert "terrible" not in replacement_words(1.0, NEGATIVE, "JJR")
    assert "disappointments" in replacement_words(1.0, NEGATIVE, "NNS")
    # An uninflected slot keeps the whole pool, as before.
    assert replacement_words(1.0, NEGATIVE, "JJ") == replacement_words(1.0, NEGATIVE)


# -- causal terms ---------------------------------------------------------------------------


def test_negation_phrase_flips_the_word_it_scopes_over(parses, lexicon):
    doc = parses.parse("The plot is not very interesting.")
    negation, word = find_terms(doc, lexicon)
    assert negation.kind == NEGATION
    assert negation.text == "not very interesting"
    assert negation.polarity == NEGATIVE
    assert negation.edited == doc[3].i and negation.removable
    assert word.kind == WORD and word.text == "interesting"
    assert word.word_polarity == POSITIVE and word.polarity == NEGATIVE
    assert not word.removable and word.replaceable


def test_bare_negation_reaches_the_word_it_modifies_and_reads_negative(parses, lexicon):
    doc = parses.parse("Some films just simply should not be remade.")
    (term,) = find_terms(doc, lexicon)
    assert term.kind == NEGATION
    assert term.text == "not be remade"
    assert term.polarity == NEGATIVE


def test_degree_adverbs_and_thanks_to_are_not_opinion_words(parses, lexicon):
    good = find_terms(parses.parse("It is a pretty good film."), lexicon)
    assert [term.text for term in good] == ["good"]  # "pretty" (VADER 2.2) only grades it
    thanks = find_terms(parses.parse("People left early, thanks to his superb direction."), lexicon)
    assert [term.text for term in thanks] == ["superb"]


def test_only_modifiers_are_removable(parses, lexicon):
    terms = find_terms(parses.parse("The superb cast was great."), lexicon)
    assert {term.text: term.removable for term in terms} == {"superb": True, "great": False}


# -- rewriting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "index", "expected"),
    [
        ("I can't stand it.", 2, "I can stand it."),
        ("I don't like it.", 2, "I do like it."),
        ("It won't work.", 2, "It will work."),
        ("No laughs were had by anyone.", 0, "Laughs were had by anyone."),
        ("He never smiles.", 1, "He smiles."),
    ],
)
def test_removing_a_negation_keeps_spacing_case_and_contractions(parses, text, index, expected):
    assert rewrite(parses.parse(text), remove={index}).text == expected


def test_removing_a_listed_modifier_takes_its_separator_and_fixes_the_article(parses):
    doc = parses.parse("It was an awful, boring movie!")
    assert rewrite(doc, remove=removal_span(doc[3])).text == "It was a boring movie!"
    assert rewrite(doc, remove=removal_span(doc[5])).text == "It was an awful movie!"
    doc = parses.parse("It was a clever and witty film.")
    assert rewrite(doc, remove=removal_span(doc[3])).text == "It was a witty film."
    doc = parses.parse("It is badly directed, badly acted and boring.")
    assert (
        rewrite(doc, remove=removal_span(doc[2])).text == "It is directed, badly acted and boring."
    )


def test_replacing_keeps_case_and_fixes_the_article(parses):
    doc = parses.parse("Bad acting. It is a bad film.")
    result = rewrite(doc, replace={0: "good", 6: "excellent"})
    assert result.text == "Good acting. It is an excellent film."
    assert result.text[result.starts[6] :].startswith("excellent")


# -- sensitivity (Eq. 1) --------------------------------------------------------------------


def test_relative_drop_is_equation_one():
    drops = relative_drops(0.8, np.array([0.2, 0.8, 0.9]))
    np.testing.assert_allclose(drops, [0.75, 0.0, -0.125])


def test_vader_scorer_reads_sentiment_and_gold_is_its_complement_for_negative():
    scorer = VaderScorer()
    texts = ["A wonderful, moving film.", "A dull, awful film."]
    positive = scorer.positive_probabilities(texts, ["", ""])
    assert positive[0] > 0.5 > positive[1]
    negative = gold_probabilities(scorer, texts, ["", ""], NEGATIVE)
    np.testing.assert_allclose(negative, 1 - positive)


def test_baseline_scorer_learns_from_the_batch_and_needs_both_polarities():
    texts = ["great fun", "great acting", "awful plot", "awful pacing"]
    polarities = [POSITIVE, POSITIVE, NEGATIVE, NEGATIVE]
    scorer = BaselineScorer(texts, polarities, [""] * 4)
    great, awful = scorer.positive_probabilities(["great", "awful"], ["", ""])
    assert great > 0.5 > awful
    with pytest.raises(ClassifierUnavailable, match="both positive and negative"):
        BaselineScorer(texts[:2], polarities[:2], [""] * 2)


# -- LM proposals and ranking ---------------------------------------------------------------


@torch.inference_mode()
def _word_logprob(lm, prefix: str, continuation: str) -> float:
    """log p(continuation | start + prefix), the slow way: one full forward, no cache."""
    tokenizer = lm.tokenizer
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    prefix_ids = [start, *tokenizer(prefix, add_special_tokens=False)["input_ids"]]
    word_ids = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prefix_ids + word_ids])
    logprobs = lm.model(input_ids=ids).logits[0].log_softmax(-1)
    positions = range(len(prefix_ids) - 1, len(prefix_ids) + len(word_ids) - 1)
    return float(sum(logprobs[p, t] for p, t in zip(positions, word_ids, strict=True)))


def test_prefix_scorer_matches_full_forwards_for_paths_of_any_length(tiny_lm):
    prefix = "The story was"
    scorer = PrefixScorer(tiny_lm, prefix)
    word_ids = tiny_lm.tokenizer(" unwatchable", add_special_tokens=False)["input_ids"]
    assert len(word_ids) >= 3  # so the batch mixes path lengths and pads
    paths = [(), tuple(word_ids[:1]), tuple(word_ids[:3]), tuple(word_ids[:2])]
    logprobs = scorer.next_logprobs(paths, batch_size=2)
    assert logprobs.shape == (4, len(tiny_lm.tokenizer))
    for path, row in zip(paths, logprobs, strict=True):
        ids = [*scorer.prefix_ids, *path]
        expected = tiny_lm.model(input_ids=torch.tensor([ids])).logits[0, -1].log_softmax(-1)
        torch.testing.assert_close(row, expected.detach(), atol=1e-4, rtol=0)


def test_proposals_are_exactly_the_most_likely_words(tiny_lm):
    prefix = "The story was"
    words = ["terrible", "awful", "dull", "bad", "unwatchable", "sad", "thin", "grim", "weak"]
    continuations = {word: " " + word for word in words}
    brute = {word: _word_logprob(tiny_lm, prefix, text) for word, text in continuations.items()}
    expected = sorted(brute, key=lambda word: -brute[word])[:4]
    proposed = propose_words(tiny_lm, prefix, continuations, 4, batch_size=3)
    assert [word for word, _ in proposed] == expected
    for word, score in proposed:
        assert score == pytest.approx(brute[word], abs=1e-4)


def test_replacements_are_ranked_by_the_sentence_log_probability(tiny_lm):
    words = ["terrible", "awful", "dull", "bad", "sad"]
    ranked = rank_replacements(
        tiny_lm,
        prefix="The movie was ",
        surfaces={word: word for word in words},
        sentence_with=lambda word: f"The movie was {word} and long.",
        proposal_count=3,
    )
    assert len(ranked) == 3
    assert [item.logprob for item in ranked] == sorted((i.logprob for i in ranked), reverse=True)
    expected = sentence_logprobs(tiny_lm, [item.sentence for item in ranked])
    assert [item.logprob for item in ranked] == pytest.approx(expected, abs=1e-4)
    assert all(item.sentence == f"The movie was {item.word} and long." for item in ranked)


# -- RM-CT ----------------------------------------------------------------------------------


def test_remove_drops_the_negation_and_intends_the_opposite_label(context):
    generator = LexiconRemove(LexiconRemove.Settings(classifier="vader", min_similarity=None))
    output = generator.generate(REVIEWS[:1], context=context)
    (result,) = output.candidates
    assert result.text == "In and of itself it is a bad film."
    assert result.generator == "lexicon-remove"
    assert result.control_code == "remove"
    assert result.intended_label == "negative"
    assert result.metadata["term_kind"] == NEGATION
    assert result.metadata["removed"] == "not"
    assert result.metadata["classifier_flipped"] is True


def test_remove_takes_the_most_important_modifier_without_an_intended_label(context):
    text = "It was a clever film with a superb cast and a lovely score."
    settings = LexiconRemove.Settings(classifier="vader", min_similarity=None, max_candidates=3)
    output = LexiconRemove(settings).generate([original("m", text, "positive")], context=context)
    importances = [result.metadata["importance"] for result in output.candidates]
    assert importances == sorted(importances, reverse=True) and len(importances) == 3
    assert all(result.intended_label is None for result in output.candidates)
    # Each candidate removes one word and nothing else.
    for result in output.candidates:
        removed = result.metadata["removed"]
        assert result.text.split() == [w for w in text.split() if w != removed]


def test_remove_with_the_baseline_classifier_trained_on_the_batch(context):
    generator = LexiconRemove(LexiconRemove.Settings(min_similarity=None))
    output = generator.generate(REVIEWS, context=context)
    by_key = {result.original_key: result for result in output.candidates}
    assert by_key["r1"].text == "In and of itself it is a bad film."
    assert by_key["r4"].text == "I did enjoy the terrible ending."
    assert by_key["r4"].metadata["classifier"] == "baseline"
    assert by_key["r2"].text == "It is directed, badly acted and boring."
    # r3's opinion words are predicates: nothing can go without leaving a hole.
    (skipped,) = output.skipped
    assert skipped.original_key == "r3" and "no removable positive term" in skipped.reason


def test_closeness_filter_uses_minilm_similarity(context):
    kept = LexiconRemove(LexiconRemove.Settings(classifier="vader", min_similarity=0.5))
    output = kept.generate(REVIEWS[:1], context=context)
    (result,) = output.candidates
    assert 0.5 <= result.metadata["similarity"] <= 1.0
    strict = LexiconRemove(LexiconRemove.Settings(classifier="vader", min_similarity=0.999))
    output = strict.generate(REVIEWS[:1], context=context)
    assert output.candidates == []
    (skipped,) = output.skipped
    assert "too far from the original" in skipped.reason


# -- REP-CT ---------------------------------------------------------------------------------


def test_replace_swaps_agreeing_words_for_opposite_ones(context, tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "gpt2"))
    settings = LexiconReplace.Settings(
        classifier="vader", model=model, proposal_count=6, max_candidates=2, min_similarity=None
    )
    output = LexiconReplace(settings).generate(REVIEWS, context=context)
    assert not output.skipped
    lexicon = opinion_lexicon(1.0)
    for result in output.candidates:
        source = next(item for item in REVIEWS if item.key == result.original_key)
        assert result.intended_label == ("negative" if source.label == "positive" else "positive")
        assert result.control_code == "replace"
        replacements = result.metadata["replacements"]
        assert replacements
        for replacement in replacements:
            before = lexicon.polarity(replacement["from"].lower())
            after = lexicon.polarity(replacement["to"].lower())
            assert before is not None and after is not None and after != before
            assert not is_profane(replacement["to"].lower())
        changed = {r["from"] for r in replacements}
        kept = [w for w in source.text.split() if w.strip(".,") not in changed]
        assert all(word in result.text for word in kept)
    # Two distinct candidates per original at most: the best and second-best choices.
    for key in {result.original_key for result in output.candidates}:
        texts = [result.text for result in output.candidates if result.original_key == key]
        assert 1 <= len(texts) <= 2 and len(set(texts)) == len(texts)


def test_replace_puts_the_new_word_in_the_replaced_words_form(context, tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "gpt2"))
    settings = LexiconReplace.Settings(
        classifier="vader", model=model, proposal_count=4, max_candidates=1, min_similarity=None
    )
    originals = [original("v1", "The critics adored the remake.", "positive")]
    (result,) = LexiconReplace(settings).generate(originals, context=context).candidates
    (replacement,) = result.metadata["replacements"]
    assert replacement["from"] == "adored"
    assert replacement["to"] in replacement_words(1.0, NEGATIVE, "VBD")
    assert result.text == f"The critics {replacement['to']} the remake."


def test_replace_changes_the_negated_word_not_the_negation(context, tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "llama"))
    settings = LexiconReplace.Settings(
        classifier="vader", model=model, proposal_count=4, max_candidates=1, min_similarity=None
    )
    output = LexiconReplace(settings).generate(REVIEWS[:1], context=context)
    (result,) = output.candidates
    (replacement,) = result.metadata["replacements"]
    assert replacement["from"] == "bad"
    assert opinion_lexicon(1.0).polarity(replacement["to"]) == POSITIVE
    assert result.text.startswith("In and of itself it is not a")
    assert result.intended_label == "negative"


def test_replace_edits_a_text_without_a_verb(context, tmp_path_factory):
    """Reviews often open with a verbless exclamation; it is the easiest flip of all."""
    model = str(tiny_lm_directory(tmp_path_factory, "gpt2"))
    settings = LexiconReplace.Settings(
        classifier="vader", model=model, proposal_count=4, max_candidates=1, min_similarity=None
    )
    originals = [original("w1", "What an awful show.", "negative")]
    output = LexiconReplace(settings).generate(originals, context=context)
    assert output.skipped == []
    (result,) = output.candidates
    (replacement,) = result.metadata["replacements"]
    assert replacement["from"] == "awful" and result.intended_label == "positive"
    assert opinion_lexicon(1.0).polarity(replacement["to"]) == POSITIVE
    assert result.text.endswith(f" {replacement['to']} show.")


@pytest.mark.parametrize(
    ("text", "index", "words", "kept"),
    [
        # A noun's slot takes a noun, whatever the language model liked best.
        ("What a disappointment it was.", 2, ["great", "pleasure", "beautiful"], ["pleasure"]),
        # An adjective's slot takes an adjective, not a verb or a noun.
        (
            "The acting was awful.",
            3,
            ["hate", "superb", "joy", "wonderful"],
            ["superb", "wonderful"],
        ),
        # A participle may be read as a verb or an adjective.
        ("The critics adored the remake.", 2, ["hated", "despised"], ["hated", "despised"]),
    ],
)
def test_replacements_keep_the_part_of_speech_of_their_slot(parses, text, index, words, kept):
    doc = parses.parse(text)

    def sentence(word):
        return rewrite(doc, replace={index: word})

    ranked = [
        RankedReplacement(word, sentence(word).text, -float(n)) for n, word in enumerate(words)
    ]

    def chosen(wanted):
        fitting = same_part_of_speech(
            ranked,
            old=doc[index],
            start_of=lambda word: sentence(word).starts[index],
            parse_many=parses.parse_many,
            wanted=wanted,
        )
        return [item.word for item in fitting]

    assert chosen(5) == kept
    assert chosen(1) == kept[:1]  # stops at what it needs, best first


def test_replace_skips_a_text_longer_than_the_model_reads(context, tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "gpt2"))  # reads 128 positions
    long_text = "The story was " + "really " * 60 + "good and the film was fun."
    settings = LexiconReplace.Settings(classifier="vader", model=model, min_similarity=None)
    output = LexiconReplace(settings).generate(
        [original("x", long_text, "positive")], context=context
    )
    assert output.candidates == []
    (skipped,) = output.skipped
    assert "language model cannot score" in skipped.reason


# -- bad input and settings -----------------------------------------------------------------


@pytest.mark.parametrize("generator_name", ["lexicon-remove", "lexicon-replace"])
def test_bad_input_gives_no_candidate_and_a_reason(generator_name, context):
    originals = [
        original("empty", "   ", "positive"),
        original("french", "Ce film est vraiment très mauvais", "negative"),
        original("long", "The film was good. " * 40, "positive"),
        original("no-opinion", "The man walked to the store on Tuesday.", "positive"),
        original("disagrees", "The ending was terrible.", "positive"),
        original("nli", "A man is playing a guitar.", "entailment"),
    ]
    progress = []
    context.progress = progress.append
    generator = load_generator(generator_name, {"classifier": "vader", "max_tokens": 60})
    output = generator.generate(originals, context=context)
    assert output.candidates == []
    reasons = {item.original_key: item.reason for item in output.skipped}
    assert reasons["empty"] == "empty text"
    assert reasons["french"].startswith("not English")
    assert reasons["long"].startswith("text longer than 60 tokens")
    assert reasons["no-opinion"] == "no opinion word or negation in the text"
    assert reasons["disagrees"] == "no opinion term agrees with the label (positive)"
    assert "neither positive" in reasons["nli"] and "positive_labels" in reasons["nli"]
    not_for_label = {item.original_key for item in output.skipped if item.not_for_label}
    assert not_for_label == {"nli"}
    assert sum(progress) == len(originals)


def test_baseline_on_a_one_sided_batch_explains_itself(context):
    generator = LexiconRemove(LexiconRemove.Settings(min_similarity=None))
    output = generator.generate([REVIEWS[0]], context=context)
    assert output.candidates == []
    (skipped,) = output.skipped
    assert "needs both positive and negative" in skipped.reason
    assert "vader" in skipped.reason


def test_label_names_follow_the_batch_and_the_settings(context):
    short = [
        original("a", "In and of itself it is not a bad film.", "pos"),
        original("b", "It was boring.", "neg"),
    ]
    generator = LexiconRemove(LexiconRemove.Settings(classifier="vader", min_similarity=None))
    (result,) = generator.generate(short, context=context).candidates
    assert result.intended_label == "neg"
    numeric = LexiconRemove(
        LexiconRemove.Settings(
            classifier="vader",
            min_similarity=None,
            positive_labels=("1",),
            negative_labels=("0",),
        )
    )
    (result,) = numeric.generate([original("c", short[0].text, "1")], context=context).candidates
    assert result.intended_label == "0"


def test_both_generators_are_registered():
    assert generator_class("lexicon-remove") is LexiconRemove
    assert generator_class("lexicon-replace") is LexiconReplace
    assert LexiconReplace.Settings().max_candidates == 3
    assert LexiconRemove.Settings().max_candidates == 1


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("lexicon-remove", {"classifier": "bert"}, "classifier must be one of"),
        ("lexicon-remove", {"proposal_count": 5}, "unknown option"),
        ("lexicon-remove", {"positive_labels": ["pos"], "negative_labels": ["POS"]}, "both"),
        ("lexicon-replace", {"min_similarity": 2}, "min_similarity"),
        ("lexicon-replace", {"proposal_count": 0}, "proposal_count"),
        ("lexicon-replace", {"min_valence": "high"}, "min_valence must be a number"),
    ],
)
def test_bad_settings_are_refused(name, options, message):
    with pytest.raises(GeneratorOptionsError, match=message):
        load_generator(name, options)
