"""Benchmark: candidate annotation (parse, edit, control code, relationship) per candidate.

Both sides run in this process on the same candidates: the first sentences of CAD's
IMDb reviews as originals (the repository's fixture sentences where CAD is missing),
each with candidates made by small word edits (negation, antonym and word swaps, moved
words, insertions, deletions, quantifiers), the kinds of change Polyjuice's control
codes name, with the repeats and copies of x a decoder produces. Ours is
`generation.postprocess.annotate` without fluency; the baseline is the loop it
replaced (`baseline_annotate` below: one shared ParseCache with the full spaCy
pipeline, then edit, code and relationship per candidate). Both are timed on one core
(`workers=0`); ours is then timed with its process pool, warm.

The baseline calls the library's `compute_edit`, `detect_code` and `relationship_of`,
which this change made cheaper too, so the ratio understates the gain over the code
before it a little.

    python bench/annotation.py                 # 256 originals, 16 candidates each
    python bench/annotation.py --quick         # under a minute on 2 CPU cores
    python bench/annotation.py --long          # whole CAD reviews, 200 x 5 candidates
    python bench/annotation.py --long --quick  # 40 reviews, about a minute

The last line reads `RESULT annotation ratio=... per_candidate_ms=...
baseline_per_candidate_ms=... workers_speedup=...` (the speed-up of 2 workers over one
core; `workers_speedup_N` for each pool size timed).

`--long` times whole IMDb reviews instead (CAD's train split, 150 words or more, each
original with its human counterfactual and word edits of that, so the changes spread
through the text), annotated as a researcher's import is: in this process,
`sanity=False`. Its baseline is the same `annotate` with the code before the
bit-parallel Levenshtein: the quadratic table (`quadratic_levenshtein`, kept here), and
the pair sanity filters, which that code ran for every pair even with `sanity=False`
(the baseline asks for them with `sanity=True`: the same work). Edit texts and sanity
facts that are now taken once per parse are cheaper on both sides, so the ratio
understates the gain a little. Its last line reads `RESULT annotation_long ratio=...
per_candidate_ms=... baseline_per_candidate_ms=... levenshtein_ratio=...`. It needs
CAD and says so when CAD is missing: it has no stand-in.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core per process, before numpy loads

import argparse  # noqa: E402
import contextlib  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation import edits  # noqa: E402
from generation.control_codes import detect_code  # noqa: E402
from generation.edits import compute_edit, levenshtein  # noqa: E402
from generation.parsing import SPACY_MODEL, ParseCache  # noqa: E402
from generation.postprocess import (  # noqa: E402
    AnnotatedCandidate,
    PostprocessResult,
    annotate,
    dedupe,
)
from generation.records import CandidateRecord, OriginalRecord  # noqa: E402
from generation.relationship import relationship_of  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "cad"
CAD_TRAIN = SHARED / "sentiment_combined_paired" / "train_paired.tsv"
LONG_REVIEW_WORDS = 150  # --long: the longer half of CAD's train reviews (870 of 1707)

AUXILIARIES = frozenset(
    {"is", "was", "are", "were", "do", "does", "did", "can", "could", "will", "would", "has",
     "have", "had", "should", "must"}
)  # fmt: skip
ANTONYMS = {
    "good": "bad", "bad": "good", "great": "terrible", "terrible": "great", "best": "worst",
    "worst": "best", "love": "hate", "loved": "hated", "hate": "love", "like": "dislike",
    "funny": "dull", "boring": "exciting", "excellent": "awful", "awful": "excellent",
    "beautiful": "ugly", "enjoyed": "disliked", "well": "badly", "never": "always",
    "always": "never", "brilliant": "mediocre", "favorite": "least favorite",
}  # fmt: skip
QUANTIFIERS = ("two", "many", "some", "all", "few", "several")
INSERTED = ("really", "very", "quite", "also", "truly", "somewhat", "old", "new", "little")


def original_texts(count: int) -> tuple[list[str], str]:
    """Up to `count` originals, and where they came from: CAD when it is there, else the
    repository's own fixture sentences (60 of them)."""
    if (SHARED / "sentiment_combined_paired" / "dev_paired.tsv").exists():
        return cad_first_sentences(count), "CAD dev first sentences"
    texts = [
        json.loads(line)["text"]
        for name in ("sentiment_reviews.jsonl", "nli_pairs.jsonl")
        for line in (REPO / "fixtures" / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return list(dict.fromkeys(texts))[:count], "fixtures/ (CAD is missing)"


def cad_first_sentences(count: int) -> list[str]:
    """First sentences (6-25 words) of the positive-side IMDb reviews of CAD's dev split."""
    from generation.parsing import load_nlp

    with (SHARED / "sentiment_combined_paired" / "dev_paired.tsv").open(encoding="utf-8") as f:
        reviews = [row["Text"].replace("<br />", " ") for row in csv.DictReader(f, delimiter="\t")]
    texts: list[str] = []
    for doc in load_nlp().pipe(reviews[::2], batch_size=64):
        first = next(iter(doc.sents)).text.strip()
        if 6 <= len(first.split()) <= 25 and first not in texts:
            texts.append(first)
        if len(texts) == count:
            break
    return texts


def word_edit(words: list[str], rng: random.Random, vocabulary: list[str]) -> list[str]:
    """One small edit of a whitespace-split sentence, of a kind a control code names."""
    words = list(words)
    position = rng.randrange(len(words))
    kind = rng.choice(
        ("negation", "antonym", "swap", "insert", "delete", "replace", "quantifier", "span")
    )
    if kind == "negation":
        auxiliaries = [i for i, word in enumerate(words) if word.lower() in AUXILIARIES]
        if "not" in words:
            words.remove("not")
        elif auxiliaries:
            words.insert(auxiliaries[0] + 1, "not")
        else:
            words.insert(position, "never")
    elif kind == "antonym":
        found = [i for i, word in enumerate(words) if word.lower() in ANTONYMS]
        index = rng.choice(found) if found else position
        words[index] = ANTONYMS.get(words[index].lower(), rng.choice(vocabulary))
    elif kind == "swap" and len(words) > 3:
        first, second = sorted(rng.sample(range(len(words)), 2))
        words[first], words[second] = words[second], words[first]
    elif kind == "insert":
        words.insert(position, rng.choice(INSERTED))
    elif kind == "delete" and len(words) > 4:
        del words[position]
    elif kind == "quantifier":
        articles = [i for i, word in enumerate(words) if word.lower() in ("a", "the", "an")]
        words[rng.choice(articles) if articles else position] = rng.choice(QUANTIFIERS)
    elif kind == "span" and len(words) > 5:
        words[position : position + 2] = rng.sample(vocabulary, rng.randint(1, 3))
    else:
        words[position] = rng.choice(vocabulary)
    return words


def word_edit_candidates(
    texts: list[str], per_original: int, seed: int
) -> tuple[dict[str, OriginalRecord], list[CandidateRecord]]:
    """`per_original` candidates of each text: one or two word edits, some repeated
    (in another case or spacing, as sampling repeats itself) and some copies of x."""
    rng = random.Random(seed)
    vocabulary = sorted({word for text in texts for word in text.split() if word.isalpha()})
    originals = {
        f"x{index}": OriginalRecord(f"x{index}", text, "") for index, text in enumerate(texts)
    }
    records = []
    for key, original in originals.items():
        made: list[str] = []
        for _ in range(per_original):
            roll = rng.random()
            if made and roll < 0.08:
                text = rng.choice(made)  # the same candidate again
                text = text.lower() if rng.random() < 0.5 else text.replace(" ", "  ", 1)
            elif roll < 0.1:
                text = original.text
            else:
                words = original.text.split()
                for _ in range(rng.choice((1, 1, 1, 2))):
                    words = word_edit(words, rng, vocabulary)
                text = " ".join(words)
                made.append(text)
            records.append(CandidateRecord(key, text, "bench", control_code="bench"))
    return originals, records


def baseline_annotate(
    records: list[CandidateRecord], originals: dict[str, OriginalRecord], *, parses: ParseCache
) -> PostprocessResult:
    """The annotation loop before the Annotator, without fluency: every text parsed by the
    full pipeline into the shared cache, then edit, code and relationship per candidate."""
    result = PostprocessResult()
    result.stats.received = len(records)
    unique = dedupe(records, originals, result.stats)
    parses.parse_many([originals[r.original_key].text for r in unique] + [r.text for r in unique])
    for record in unique:
        x = parses.parse(originals[record.original_key].text)
        x_hat = parses.parse(record.text)
        edit = compute_edit(x, x_hat)
        code = detect_code(x, x_hat, edit)
        relationship = relationship_of(record.original_key, x, x_hat, edit, code)
        result.stats.kept += 1
        result.candidates.append(
            AnnotatedCandidate(
                record=record,
                code=code,
                edit=edit.to_dict(),
                relationship=relationship,
                fluency=None,
            )
        )
    return result


def best_of(repeats: int, run):
    """The fastest of `repeats` runs: (wall seconds, this process's CPU seconds, result)."""
    best, result = (float("inf"), float("inf")), None
    for _ in range(repeats):
        started, cpu = time.perf_counter(), time.process_time()
        result = run()
        best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
    return *best, result


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="48 originals, 12 candidates each")
    parser.add_argument(
        "--long",
        action="store_true",
        help="whole CAD reviews against the code before the bit-parallel Levenshtein",
    )
    parser.add_argument("--originals", type=int, default=None)
    parser.add_argument("--per-original", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--workers",
        default=None,
        help="pool sizes to time, comma-separated (default: 2 and every core up to 8)",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def _annotations(result: PostprocessResult) -> list[tuple]:
    """What two annotation runs must agree on, candidate by candidate."""
    return [(c.record, c.code, c.edit, c.relationship) for c in result.candidates]


def warm_up(texts: list[str], seed: int) -> None:
    """spaCy's models loaded, and both sides run once on a few candidates, untimed."""
    from generation import annotation_pool
    from generation.parsing import load_nlp

    load_nlp(), annotation_pool.annotation_nlp(SPACY_MODEL)
    warm_originals, warm_records = word_edit_candidates(texts[:4], 4, seed + 1)
    annotate(warm_records, warm_originals, parses=ParseCache(), workers=0)
    baseline_annotate(warm_records, warm_originals, parses=ParseCache())


def pool_measure(records, originals, repeats: int, workers: int, ours, ours_s: float):
    """Ours with a pool of `workers`, started and warmed by one untimed run (spaCy loads
    once per worker), then timed as a long run finds it, and printed: (speed-up over one
    core, this process's CPU ms per candidate, whether it annotates as one core does)."""
    annotated = len(ours.candidates)
    started = time.perf_counter()
    annotate(records, originals, parses=ParseCache(), workers=workers)
    first_s = time.perf_counter() - started
    pool_s, pool_cpu_s, pooled = best_of(
        repeats,
        lambda: annotate(records, originals, parses=ParseCache(), workers=workers),
    )
    speedup = ours_s / pool_s
    main_cpu_ms = pool_cpu_s / annotated * 1000
    same = _annotations(pooled) == _annotations(ours)
    print(
        f"ours, {workers} workers: {pool_s:.2f} s = {pool_s / annotated * 1000:.3f} ms per "
        f"candidate, {speedup:.2f}x one core (first run, starting the pool: "
        f"{first_s:.1f} s); this process's CPU: {main_cpu_ms:.3f} ms per "
        f"candidate; same annotations: {'yes' if same else 'NO'}"
    )
    return speedup, main_cpu_ms, same


def main() -> int:
    args = arguments()
    if args.long:
        return long_main(args)
    count = args.originals or (48 if args.quick else 256)
    per_original = args.per_original or (12 if args.quick else 16)
    repeats = args.repeats or (1 if args.quick else 3)
    cores = os.cpu_count() or 1
    pools = (
        [int(n) for n in args.workers.split(",")]
        if args.workers
        else sorted({2, *(n for n in (4, 8) if n <= cores)})
    )

    from generation import annotation_pool

    texts, source = original_texts(count)
    originals, records = word_edit_candidates(texts, per_original, args.seed)
    warm_up(texts, args.seed)

    # One core: a fresh cache each run, so every text is parsed as in a real run.
    base_s, _, base = best_of(
        repeats, lambda: baseline_annotate(records, originals, parses=ParseCache())
    )
    ours_s, _, ours = best_of(
        repeats, lambda: annotate(records, originals, parses=ParseCache(), workers=0)
    )
    annotated = len(ours.candidates)
    same = _annotations(ours) == _annotations(base)
    per_candidate_ms = ours_s / annotated * 1000
    baseline_ms = base_s / annotated * 1000
    print(
        f"data: {len(texts)} originals from {source}, {len(records)} candidates, "
        f"{annotated} annotated "
        f"({ours.stats.duplicates} duplicates, {ours.stats.copies} copies of x); "
        f"{cores} cores"
    )
    print(f"baseline, one core: {base_s:.2f} s = {baseline_ms:.3f} ms per candidate")
    print(f"ours, one core:     {ours_s:.2f} s = {per_candidate_ms:.3f} ms per candidate")
    print(f"same annotations as the baseline: {'yes' if same else 'NO'}")

    speedups, main_cpu_ms = {}, {}
    for workers in pools:
        speedups[workers], main_cpu_ms[workers], same_pool = pool_measure(
            records, originals, repeats, workers, ours, ours_s
        )
        same = same and same_pool
    annotation_pool.shutdown()

    ratio = base_s / ours_s
    print(f"per candidate on one core: {ratio:.2f}x cheaper than the baseline")
    extra = " ".join(f"workers_speedup_{n}={s:.2f}" for n, s in speedups.items())
    print(
        f"RESULT annotation ratio={ratio:.2f} per_candidate_ms={per_candidate_ms:.3f} "
        f"baseline_per_candidate_ms={baseline_ms:.3f} "
        f"workers_speedup={speedups[min(speedups)]:.2f} {extra} "
        f"main_cpu_ms={main_cpu_ms[min(main_cpu_ms)]:.3f} candidates={annotated} "
        f"cores={cores} same={int(same)}"
    )
    return 0 if same else 1


# --- Long texts (--long) -------------------------------------------------------------


def cad_review_pairs(count: int) -> list[tuple[str, str]]:
    """The first `count` (original, human counterfactual) review pairs of CAD's train
    split whose original has `LONG_REVIEW_WORDS` words or more, whole (rows come in
    pairs, the original first)."""
    with CAD_TRAIN.open(encoding="utf-8") as f:
        texts = [row["Text"] for row in csv.DictReader(f, delimiter="\t")]
    pairs = zip(texts[0::2], texts[1::2], strict=False)
    return [pair for pair in pairs if len(pair[0].split()) >= LONG_REVIEW_WORDS][:count]


def long_candidates(
    pairs: list[tuple[str, str]], per_original: int, seed: int
) -> tuple[dict[str, OriginalRecord], list[CandidateRecord]]:
    """Each review with its human counterfactual and `per_original - 1` word edits of it
    (one to three `word_edit`s each)."""
    rng = random.Random(seed)
    originals, records = {}, []
    for index, (original, counterfactual) in enumerate(pairs):
        key = f"r{index}"
        originals[key] = OriginalRecord(key, original, "")
        vocabulary = sorted({word for word in original.split() if word.isalpha()})
        texts = [counterfactual]
        for _ in range(per_original - 1):
            words = counterfactual.split()
            for _ in range(rng.randint(1, 3)):
                words = word_edit(words, rng, vocabulary)
            texts.append(" ".join(words))
        records += [CandidateRecord(key, text, "bench", control_code="bench") for text in texts]
    return originals, records


def quadratic_levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """`generation.edits.levenshtein` before the bit-parallel algorithm: the DP table over
    what is left between the shared prefix and suffix."""
    prefix = 0
    while prefix < len(a) and prefix < len(b) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < len(a) - prefix and suffix < len(b) - prefix and a[-1 - suffix] == b[-1 - suffix]
    ):
        suffix += 1
    a, b = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, start=1):
        current = [i]
        for j, right in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
            )
        previous = current
    return previous[-1]


@contextlib.contextmanager
def quadratic_levenshtein_in_edits() -> Iterator[None]:
    """`compute_edit` measures its edits with `quadratic_levenshtein` while inside."""
    edits.levenshtein = quadratic_levenshtein
    try:
        yield
    finally:
        edits.levenshtein = levenshtein


def baseline_long_annotate(
    records: list[CandidateRecord], originals: dict[str, OriginalRecord]
) -> PostprocessResult:
    """`annotate` as an import called it before this change, on one core: the quadratic
    Levenshtein, and the pair sanity filters run for every pair."""
    with quadratic_levenshtein_in_edits():
        return annotate(records, originals, parses=ParseCache(), workers=0, sanity=True)


def levenshtein_ms(distance, sequences: list[tuple[list[str], list[str]]]) -> float:
    """Milliseconds per pair that `distance` takes over `sequences`."""
    started = time.perf_counter()
    for a, b in sequences:
        distance(a, b)
    return (time.perf_counter() - started) / len(sequences) * 1000


def long_main(args: argparse.Namespace) -> int:
    if not CAD_TRAIN.exists():
        print(f"CAD is missing ({CAD_TRAIN} not found): --long measures whole CAD reviews")
        print("and has no stand-in; nothing was measured.")
        return 2
    from generation import annotation_pool

    count = args.originals or (40 if args.quick else 200)
    per_original = args.per_original or 5
    repeats = args.repeats or 1
    originals, records = long_candidates(cad_review_pairs(count), per_original, args.seed)
    tokenizer = annotation_pool.annotation_nlp(SPACY_MODEL).tokenizer
    sequences = [
        (
            [token.lower_ for token in tokenizer(originals[record.original_key].text)],
            [token.lower_ for token in tokenizer(record.text)],
        )
        for record in records
    ]
    mean_tokens = sum(len(a) for a, _ in sequences) / len(sequences)

    # spaCy loaded and both sides run once on a few reviews, untimed.
    warm_keys = list(originals)[:2]
    warm_records = [r for r in records if r.original_key in warm_keys]
    annotate(warm_records, originals, parses=ParseCache(), workers=0, sanity=False)
    baseline_long_annotate(warm_records, originals)

    base_s, _, base = best_of(repeats, lambda: baseline_long_annotate(records, originals))
    ours_s, _, ours = best_of(
        repeats,
        lambda: annotate(records, originals, parses=ParseCache(), workers=0, sanity=False),
    )
    annotated = len(ours.candidates)
    same = _annotations(ours) == _annotations(base)
    per_candidate_ms, baseline_ms = ours_s / annotated * 1000, base_s / annotated * 1000
    quadratic_ms = levenshtein_ms(quadratic_levenshtein, sequences)
    bit_parallel_ms = levenshtein_ms(levenshtein, sequences)
    ratio, levenshtein_ratio = base_s / ours_s, quadratic_ms / bit_parallel_ms
    print(
        f"data: {len(originals)} CAD train reviews ({mean_tokens:.0f} tokens on average), "
        f"{len(records)} candidates (human counterfactuals and word edits of them), "
        f"{annotated} annotated; {os.cpu_count() or 1} cores"
    )
    print(f"baseline, one core: {base_s:.2f} s = {baseline_ms:.3f} ms per candidate")
    print(f"ours, one core:     {ours_s:.2f} s = {per_candidate_ms:.3f} ms per candidate")
    print(f"same annotations as the baseline: {'yes' if same else 'NO'}")
    print(
        f"levenshtein alone, on the same pairs' tokens: quadratic {quadratic_ms:.3f} ms per "
        f"pair, bit-parallel {bit_parallel_ms:.3f} ms, {levenshtein_ratio:.1f}x"
    )
    print(f"per candidate on one core: {ratio:.2f}x cheaper than the baseline")
    print(
        f"RESULT annotation_long ratio={ratio:.2f} per_candidate_ms={per_candidate_ms:.3f} "
        f"baseline_per_candidate_ms={baseline_ms:.3f} levenshtein_ratio={levenshtein_ratio:.1f} "
        f"levenshtein_ms={bit_parallel_ms:.4f} baseline_levenshtein_ms={quadratic_ms:.4f} "
        f"candidates={annotated} mean_tokens={mean_tokens:.0f} same={int(same)}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
