"""Benchmark: every registered generator on the same sentiment originals from CAD dev.

The originals are sentences of CAD's IMDb dev reviews (Kaushik et al., 2020) that the
human revision changed: each review pair is split into sentences and, where both sides
have as many sentences, the first changed sentence of the first review of the pair is
an original (labeled with that review's sentiment) and its revised sentence is the
human counterfactual, measured as one more row ("human (CAD)") beside the generators.

Every generator runs through `generation.pipeline.run_generator`, as a campaign's
chunks do, on one packaged SmolLM2 (generator where one is needed, and fluency filter
at the default threshold 10). For each, over the kept candidates:

- cands: distinct candidates per original; kept: of those, per original, after the
  fluency filter; fluency_pass: kept / distinct; coverage: share of originals with one;
- levenshtein: token edit distance to x; similarity: MiniLM cosine similarity to x;
  bleu2: BLEU with n-grams up to 2 against x (NeuroCounterfactuals Table 4's BLEU);
- distinct2: distinct bigrams / all bigrams over the kept set (Table 4's Distinct-2);
- flip: share whose predicted label differs from x's under a TF-IDF + logistic
  regression trained on the CAD train originals (`generation.priority.BaselineClassifier`);
- s_per_original: wall time of generation and annotation, divided by the originals, after
  one throwaway original per generator (lexicons, WordNet and the models load before).

    python bench/generators.py --quick          # 4 originals, small beams; < 60 s on 2 CPU cores
    python bench/generators.py --originals 40

The last line reads `RESULT generators polyjuice.cands=... polyjuice.flip=... ...`.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "2")

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation.generators import GenerationContext, generator_names, load_generator  # noqa: E402
from generation.metrics import (  # noqa: E402
    bleu,
    distinct_n,
    embedding_distances,
    sentence_embeddings,
    token_levenshtein,
)
from generation.models import DEFAULT_MODEL, load_causal_lm  # noqa: E402
from generation.parsing import ParseCache, load_nlp  # noqa: E402
from generation.pipeline import PipelineSettings, run_generator  # noqa: E402
from generation.priority import BaselineClassifier  # noqa: E402
from generation.records import CandidateRecord, OriginalRecord  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "cad" / "sentiment_combined_paired"
HUMAN = "human (CAD)"
LABELS = ("negative", "positive")
# Sentence ends and the HTML line breaks of IMDb reviews.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|<br\s*/?>")


def review_pairs(split: str) -> list[tuple[dict, dict]]:
    """(first, second) review of each CAD pair: consecutive rows with one batch id."""
    with (SHARED / f"{split}_paired.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    pairs = list(zip(rows[::2], rows[1::2], strict=True))
    assert all(a["batch_id"] == b["batch_id"] for a, b in pairs), f"{split}: rows out of pairs"
    return pairs


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]


def sentence_pairs(count: int, seed: int) -> list[tuple[OriginalRecord, str]]:
    """Originals with their human counterfactual: one changed sentence per review pair."""
    found = []
    for index, (first, second) in enumerate(review_pairs("dev")):
        ours, theirs = sentences(first["Text"]), sentences(second["Text"])
        if len(ours) != len(theirs):
            continue  # the revision merged or split sentences: no one-to-one pairing
        for x, revised in zip(ours, theirs, strict=True):
            if x != revised and 6 <= len(x.split()) <= 25:
                label = first["Sentiment"].strip().lower()
                found.append((OriginalRecord(f"d{index}", x, label), revised))
                break
    random.Random(seed).shuffle(found)
    return found[:count]


def flip_classifier() -> BaselineClassifier:
    """TF-IDF + logistic regression on the first review of every CAD train pair."""
    pairs = review_pairs("train")
    texts = [first["Text"].replace("<br />", " ") for first, _ in pairs]
    labels = [first["Sentiment"].strip().lower() for first, _ in pairs]
    return BaselineClassifier().fit(texts, labels)


def bench_options(quick: bool) -> dict[str, dict]:
    """Each generator's settings here: on sentiment, any label is converted (the causal
    rules' default labels are the causal-strength task's) and steered to the other."""
    options = {
        "polyjuice": {
            "codes": ["negation", "lexical"] if quick else ["negation", "lexical", "resemantic"],
            "blank_sets": 1 if quick else 2,
            "per_prompt": 2 if quick else 3,
        },
        "causal-negation": {"source_labels": [], "target_label": ""},
        "causal-strengthen": {"source_labels": [], "target_label": ""},
        "lexicon-remove": {"classifier": "vader"},
        "lexicon-replace": {"classifier": "vader", "proposal_count": 20 if quick else 50},
        "concept-steered": {
            "label_choices": list(LABELS),
            "beam_size": 4 if quick else 8,
            "num_return": 1 if quick else 2,
            "max_new_tokens_cap": 32 if quick else 64,
        },
    }
    missing = set(generator_names()) - set(options)
    assert not missing, f"no benchmark settings for {sorted(missing)}"
    return options


@dataclass
class Measured:
    name: str
    originals: int
    candidates: int  # distinct, before the fluency filter
    kept: list[CandidateRecord]
    covered: int  # originals with a kept candidate
    seconds: float | None


def measure(name, options, originals, lm, show_progress: bool) -> Measured:
    generator = load_generator(name, options)
    settings = PipelineSettings(device=str(lm.device), fluency_threshold=10.0)
    context = GenerationContext(parses=ParseCache(), device=str(lm.device), lm=lm)
    started = time.perf_counter()
    result, _ = run_generator(
        generator, originals, settings, fluency_lm=lm, context=context, show_progress=show_progress
    )
    seconds = time.perf_counter() - started
    kept = [candidate.record for candidate in result.kept]
    covered = len({record.original_key for record in kept})
    return Measured(name, len(originals), len(result.candidates), kept, covered, seconds)


def measure_human(pairs, lm) -> Measured:
    """The human revisions through the same dedupe, annotation and fluency filter."""
    from generation.postprocess import annotate

    originals = {original.key: original for original, _ in pairs}
    records = [
        CandidateRecord(original.key, revised, HUMAN, intended_label=None)
        for original, revised in pairs
    ]
    result = annotate(records, originals, parses=ParseCache(), fluency_lm=lm, threshold=10.0)
    kept = [candidate.record for candidate in result.candidates if candidate.kept]
    covered = len({record.original_key for record in kept})
    return Measured(HUMAN, len(pairs), len(result.candidates), kept, covered, None)


def figures(measured: Measured, originals: dict[str, OriginalRecord], classifier) -> dict:
    kept = measured.kept
    mean = lambda values: statistics.fmean(values) if values else float("nan")  # noqa: E731
    xs = [originals[record.original_key].text for record in kept]
    x_hats = [record.text for record in kept]
    flips = []
    if kept:
        classes = list(classifier.classes_)
        before = classifier.predict_proba(xs).argmax(axis=1)
        after = classifier.predict_proba(x_hats).argmax(axis=1)
        flips = [float(classes[a] != classes[b]) for a, b in zip(before, after, strict=True)]
    return {
        "cands": measured.candidates / measured.originals,
        "kept": len(kept) / measured.originals,
        "fluency_pass": len(kept) / measured.candidates if measured.candidates else float("nan"),
        "coverage": measured.covered / measured.originals,
        "levenshtein": mean(
            [
                token_levenshtein(x.lower().split(), x_hat.lower().split())
                for x, x_hat in zip(xs, x_hats, strict=True)
            ]
        ),
        "similarity": mean([1 - d for d in embedding_distances(xs, x_hats)]),
        "bleu2": mean(
            [
                bleu(x_hat.lower().split(), [x.lower().split()], max_n=2)
                for x, x_hat in zip(xs, x_hats, strict=True)
            ]
        ),
        "distinct2": distinct_n(x_hats, 2) or float("nan"),
        "flip": mean(flips),
        "s_per_original": (
            measured.seconds / measured.originals if measured.seconds is not None else float("nan")
        ),
    }


COLUMNS = (
    "cands",
    "kept",
    "fluency_pass",
    "coverage",
    "levenshtein",
    "similarity",
    "bleu2",
    "distinct2",
    "flip",
    "s_per_original",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 originals, small beams.")
    parser.add_argument("--originals", type=int, default=40)
    parser.add_argument("--generators", default=",".join(generator_names()))
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--progress", action="store_true", help="Progress bars on stderr.")
    parser.add_argument("--json", help="Also write the figures to this file.")
    args = parser.parse_args()
    if not SHARED.exists():
        print(f"bench: the CAD data is missing at {SHARED}", file=sys.stderr)
        return 2
    if args.quick:
        args.originals = 4
    started = time.perf_counter()

    # 1. Data, the flip classifier, and every shared model loaded before any timing.
    pairs = sentence_pairs(args.originals + 1, args.seed)
    warm_up, pairs = pairs[0][0], pairs[1:]
    originals = [original for original, _ in pairs]
    by_key = {original.key: original for original in originals}
    classifier = flip_classifier()
    lm = load_causal_lm(args.model, device=args.device)
    load_nlp()
    sentence_embeddings(["warm up"])
    labels = [original.label for original in originals]
    print(
        f"{len(originals)} CAD dev sentences ({labels.count('positive')} positive, "
        f"{labels.count('negative')} negative); model {args.model} on {lm.device}; "
        f"set-up {time.perf_counter() - started:.1f}s"
    )

    # 2. Each generator on the same originals, then the human revisions.
    options = bench_options(args.quick)
    results: dict[str, dict] = {}
    for name in args.generators.split(","):
        # Each generator once on a throwaway original: its lexicons and tables load then.
        measure(name, options[name], [warm_up], lm, show_progress=False)
        measured = measure(name, options[name], originals, lm, args.progress)
        results[name] = figures(measured, by_key, classifier)
    results[HUMAN] = figures(measure_human(pairs, lm), by_key, classifier)

    # 3. One table, then the RESULT line.
    width = max(len(name) for name in results)
    print(f"{'generator':<{width}}  " + "  ".join(f"{c:>14}" for c in COLUMNS))
    for name, row in results.items():
        print(f"{name:<{width}}  " + "  ".join(f"{row[c]:>14.3f}" for c in COLUMNS))
    print(f"total {time.perf_counter() - started:.1f}s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    pairs_out = [
        f"{name.replace(' (CAD)', '')}.{column}={row[column]:.3f}"
        for name, row in results.items()
        for column in COLUMNS
    ]
    print("RESULT generators " + " ".join(pairs_out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
