"""generation.sanity: each filter drops the broken candidate it names and keeps a good
one; human counterfactuals pass; the Annotator drops, names and counts, unless told not
to."""

import csv
from pathlib import Path

import pytest

from generation import postprocess, sanity
from generation.fluency import FluencyScore
from generation.parsing import ParseCache, load_nlp
from generation.postprocess import Annotator, annotate
from generation.records import CandidateRecord, OriginalRecord

CAD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cad"
CAD_PAIRS = 200
CAD_MIN_PASS = 0.95

ACTING = "The acting was superb and the story kept me hooked until the very end."


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


def _record(text: str, prompt: str = "") -> CandidateRecord:
    return CandidateRecord("x", text, "test", control_code="negation", prompt=prompt)


# Each filter: (filter, original, a broken candidate it drops, a good one it keeps).
CASES = [
    (
        sanity.near_copy,
        "The movie was great, and I loved it.",
        "the movie was great and I loved it!",
        "The movie was awful, and I hated it.",
    ),
    (
        sanity.truncated,
        ACTING,
        "The acting was superb and the story kept me",
        "The acting was awful and the story lost me long before the end.",
    ),
    (
        sanity.truncated,
        "It is a film about a man who loses everything and finds his family",
        "It is a film about a man",
        "It is a film about a woman who loses everything and finds her family",
    ),
    (
        sanity.truncated,
        "Brilliant cast, sharp script, great fun.",
        "Brilliant cast, sharp script and the.",
        "Brilliant cast, dull script, no fun.",
    ),
    (
        sanity.run_on,
        "The movie was great.",
        "The movie was great. I will watch it again with my whole family next week.",
        "The movie was not great at all, sadly.",
    ),
    (
        sanity.run_on,
        "I liked it.",
        "I liked it and the cast and the music and the sets and the costumes and the "
        "lighting and the editing and the score and the ending.",
        "I liked it a lot more than I expected to.",
    ),
    (
        sanity.repeated_ngram,
        ACTING,
        "The acting was superb and the story kept me hooked hooked hooked until the end.",
        "The acting was very very poor and the story never hooked me at all.",
    ),
    (
        sanity.repeated_ngram,
        ACTING,
        "The acting was superb and the the story kept me hooked until the very end.",
        "The acting was dreadful and the story kept me bored until the very end.",
    ),
    (
        sanity.repeated_ngram,
        ACTING,
        "The acting was superb and the story was superb and the story kept me hooked.",
        "The acting was flat and the story, though short, felt long until the end.",
    ),
    (
        sanity.non_word,
        ACTING,
        "The acting was superb and the storyand kept me hooked until the very end.",
        "The acting was unconvincing and Tarantino kept me bored until the very end.",
    ),
    (
        sanity.fragment,
        "I loved every minute of this wonderful film.",
        "Every minute of this wonderful film.",
        "I hated every minute of this dreadful film.",
    ),
]


@pytest.mark.parametrize(
    "check, original, broken, good",
    CASES,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)],
)
def test_each_filter_drops_the_broken_candidate_and_keeps_the_good_one(
    parses, check, original, broken, good
):
    x = parses.parse(original)

    assert check(x, parses.parse(broken)) == check.__name__
    assert check(x, parses.parse(good)) is None
    assert sanity.pair_sanity_reason(x, parses.parse(good)) is None


def test_a_repeat_or_a_non_word_the_original_has_is_no_reason(parses):
    x = parses.parse("It was a very very very long film, reasonbaly good.")
    x_hat = parses.parse("It was a very very very short film, reasonbaly bad.")

    assert sanity.repeated_ngram(x, x_hat) is None
    assert sanity.non_word(x, x_hat) is None


def test_names_numbers_and_prefixed_words_are_words(parses):
    x = parses.parse("The sequel was funny.")
    x_hat = parses.parse("The 2nd Zbigniew sequel was unfunny, meh.")

    assert sanity.non_word(x, x_hat) is None


def test_edits_outside_the_blanks_are_caught_for_infill_only():
    prompt = "The acting was [BLANK] and the story kept me [BLANK] until the very end."
    filled = "The acting was dull and the story kept me  waiting until the very end."
    rewrote = "The acting was dull and the plot kept me waiting until the very end."
    deleted = "The acting was dull and the story kept me until the very end."

    assert sanity.outside_blanks(_record(filled, prompt)) is None
    assert sanity.outside_blanks(_record(deleted, prompt)) is None
    assert sanity.outside_blanks(_record(rewrote, prompt)) == "outside_blanks"
    assert sanity.outside_blanks(_record(rewrote, "[BLANK]")) is None  # whole sentence
    assert sanity.outside_blanks(_record(rewrote)) is None  # no prompt


def test_sanity_reason_applies_the_filters_in_order(parses):
    x = parses.parse(ACTING)
    cut = "The acting was superb and the story the story"
    record = _record(cut, "The acting was superb and [BLANK] the story kept me hooked.")

    assert sanity.sanity_reason(x, parses.parse(cut), None, record) == "outside_blanks"
    assert sanity.sanity_reason(x, parses.parse(cut), None, _record(cut)) == "truncated"
    assert list(sanity.REASONS)[:2] == ["outside_blanks", "near_copy"]


def test_the_word_list_comes_from_pinned_packages():
    words = sanity.word_list()

    assert {"lemminflect", "spacy"} <= set(sanity.WORD_LIST_SOURCES)
    assert {"the", "movie", "extravaganza", "gon", "hilarious"} <= words
    assert "storyand" not in words


def _cad_pairs(count: int) -> list[tuple[str, str]]:
    """First sentences of CAD's original and revised reviews, where they differ."""
    nlp = load_nlp()
    pairs: list[tuple[str, str]] = []
    for split in ("dev", "train"):
        path = CAD / "sentiment_combined_paired" / f"{split}_paired.tsv"
        with path.open(encoding="utf-8") as f:
            texts = [
                row["Text"].replace("<br />", " ") for row in csv.DictReader(f, delimiter="\t")
            ]
        # Rows come in pairs, the original first; a pair whose first sentences differ
        # only in spacing or punctuation edited a later sentence (no counterfactual here).
        # The first 400 characters hold the first sentence and parse quicker.
        for start in range(0, len(texts) - 1, 100):
            docs = nlp.pipe(text[:400] for text in texts[start : start + 100])
            firsts = [next(iter(doc.sents)).text.strip() for doc in docs]
            pairs += [
                (x, x_hat)
                for x, x_hat in zip(firsts[0::2], firsts[1::2], strict=True)
                if sanity._letters(x) != sanity._letters(x_hat)
            ]
            if len(pairs) >= count:
                return pairs[:count]
    return pairs


@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_human_counterfactuals_almost_all_pass(parses):
    pairs = _cad_pairs(CAD_PAIRS)
    reasons = [
        sanity.pair_sanity_reason(parses.parse(x), parses.parse(x_hat)) for x, x_hat in pairs
    ]

    passed = reasons.count(None) / len(pairs)  # 0.98 (196 of 200) when written
    assert len(pairs) == CAD_PAIRS
    assert passed >= CAD_MIN_PASS, [
        (reason, x_hat) for reason, (_, x_hat) in zip(reasons, pairs, strict=True) if reason
    ]


# -- in the Annotator -------------------------------------------------------------------

ORIGINALS = {"x": OriginalRecord("x", ACTING, "positive")}
GOOD = "The acting was dreadful and the story kept me bored until the very end."
BROKEN = {
    "The acting was superb and the story kept me": "truncated",
    "the acting was superb, and the story kept me hooked until the very end!": "near_copy",
    "The acting was superb and the the story kept me hooked until the very end.": (
        "repeated_ngram"
    ),
}


def test_the_annotator_drops_names_and_counts_and_scores_only_the_rest(parses, monkeypatch):
    asked = []

    def fake(lm, items, *, batch_size=64):
        asked.extend(items)
        return [FluencyScore(full=-1.0, changed=None)] * len(items)

    monkeypatch.setattr(postprocess, "fluency_scores", fake)
    # No model behind the fake scores: every text counts as one it reads whole.
    monkeypatch.setattr(postprocess, "readable", lambda lm, texts: [True] * len(texts))
    records = [_record(text) for text in (GOOD, *BROKEN)]

    result = annotate(records, ORIGINALS, parses=parses, fluency_lm=object())

    dropped = {c.record.text: c.dropped_by for c in result.candidates}
    assert dropped == {GOOD: None, **BROKEN}
    assert [item.candidate for item in asked] == [GOOD]
    assert all(c.fluency is None for c in result.candidates if c.dropped_by)
    assert result.stats.dropped == {"truncated": 1, "near_copy": 1, "repeated_ngram": 1}
    assert result.stats.sanity_dropped == 3 and result.stats.fluency_dropped == 0
    assert result.stats.kept == 1


def test_outside_blanks_reads_each_record_prompt(parses):
    prompt = "The acting was [BLANK] and the story kept me hooked until the very end."
    kept = _record(GOOD.replace("bored", "hooked"), prompt)
    rewrote = _record(GOOD, prompt)

    result = Annotator(ORIGINALS, parses=parses, workers=0)
    result.add([kept, rewrote])
    finished = result.finish()

    assert [c.dropped_by for c in finished.candidates] == [None, "outside_blanks"]


def test_sanity_off_keeps_every_candidate(parses):
    records = [_record(text) for text in (GOOD, *BROKEN)]

    on = annotate(records, ORIGINALS, parses=parses)
    off = annotate(records, ORIGINALS, parses=parses, sanity=False)

    assert all(c.kept for c in off.candidates)
    assert off.stats.dropped == {} and off.stats.kept == 4
    assert [(c.record, c.code, c.edit, c.relationship) for c in off.candidates] == [
        (c.record, c.code, c.edit, c.relationship) for c in on.candidates
    ]
