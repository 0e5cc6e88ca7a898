"""Benchmark: does lexicon replacement keep the part of speech of the word it replaces?

REP-CT (`lexicon-replace`) ranks opposite-polarity words for an opinion word's slot by
the language model. An uninflected slot's pool holds every such word, and the model
likes an adjective after "What a" as much as a noun ("What a disappointment..." gave
"What a great..."). Ours keeps a ranked word only when spaCy reads it as the replaced
word's part of speech (`generation.generators.lexicon.replacement.same_part_of_speech`);
the baseline, in the same run on the same originals and model, takes the ranking as it
comes (the code before that check).

Originals: first sentences (6-22 words) of CAD sentiment dev reviews that the human
revision changed (`generation.cad_sentiment.held_out_originals`), packaged SmolLM2 on
CPU, the generator's defaults. For each side: candidates, replacements, replacements
whose new word the parser reads as another part of speech than the old one (each
candidate parsed on its own, not as the check parses it), and the share of candidates
within the default fluency threshold (10 nats) of their original.

    python bench/lexicon_slots.py --quick     # 20 originals, about 2 minutes on 2 cores
    python bench/lexicon_slots.py             # 80 originals

The last line reads `RESULT lexicon_slots mismatch=... baseline_mismatch=...
candidates=... baseline_candidates=... seconds=... baseline_seconds=...`.
"""

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation.cad_sentiment import (  # noqa: E402
    DEFAULT_CAD,
    held_out_originals,
    sentiment_pairs,
)
from generation.precision import add_dtype_argument  # noqa: E402


def run(originals, *, lm, parses, check: bool) -> dict:
    """Lexicon replacement over `originals`, with or without the part-of-speech check."""
    from generation.fluency import sentence_logprobs
    from generation.generators import GenerationContext
    from generation.generators.lexicon import LexiconReplace
    from generation.generators.lexicon import generators as lexicon_generators
    from generation.generators.lexicon.replacement import _fits, same_part_of_speech

    def take_as_ranked(ranked, *, old, start_of, parse_many, wanted):
        return list(ranked[:wanted])

    lexicon_generators.same_part_of_speech = same_part_of_speech if check else take_as_ranked
    try:
        context = GenerationContext(parses=parses, device="cpu", lm=lm)
        started = time.perf_counter()
        output = LexiconReplace(LexiconReplace.Settings(classifier="vader")).generate(
            originals, context=context
        )
        seconds = time.perf_counter() - started
    finally:
        lexicon_generators.same_part_of_speech = same_part_of_speech
    by_key = {original.key: original for original in originals}
    replacements = mismatched = 0
    for candidate in output.candidates:
        old_doc = parses.parse(by_key[candidate.original_key].text)
        new_doc = parses.parse(candidate.text)
        for replacement in candidate.metadata["replacements"]:
            old = next((t for t in old_doc if t.text == replacement["from"]), None)
            new = next((t for t in new_doc if t.text == replacement["to"]), None)
            replacements += 1
            mismatched += old is not None and new is not None and not _fits(old, new)
    texts = [candidate.text for candidate in output.candidates]
    sources = [by_key[candidate.original_key].text for candidate in output.candidates]
    fluent = sum(
        1
        for new, old in zip(
            sentence_logprobs(lm, texts), sentence_logprobs(lm, sources), strict=True
        )
        if old - new <= 10
    )
    return {
        "candidates": len(texts),
        "skipped": len(output.skipped),
        "replacements": replacements,
        "mismatched": mismatched,
        "fluent": fluent / len(texts) if texts else 0.0,
        "seconds": seconds,
    }


def share(figures: dict) -> float:
    """Replacements read as another part of speech, of all replacements."""
    return figures["mismatched"] / figures["replacements"] if figures["replacements"] else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 originals.")
    parser.add_argument("--originals", type=int, default=80)
    parser.add_argument("--data", type=Path, default=DEFAULT_CAD, help="The CAD data folder.")
    add_dtype_argument(parser)
    args = parser.parse_args()
    count = 20 if args.quick else args.originals

    from generation.models import DEFAULT_MODEL, load_cached
    from generation.parsing import ParseCache

    originals = held_out_originals(sentiment_pairs(args.data, "dev"), count).originals
    lm = load_cached(DEFAULT_MODEL, "cpu", args.dtype)
    parses = ParseCache()
    run(originals[:1], lm=lm, parses=parses, check=True)  # lexicon, WordNet, caches warm
    baseline = run(originals, lm=lm, parses=parses, check=False)
    ours = run(originals, lm=lm, parses=parses, check=True)
    print(f"{len(originals)} CAD sentiment dev originals, {DEFAULT_MODEL} on cpu")
    print(
        f"{'':24} {'candidates':>10} {'skipped':>8} {'replaced':>9} {'other POS':>10} "
        f"{'fluent':>7} {'seconds':>8}"
    )
    for name, figures in (("ranking as it comes", baseline), ("same part of speech", ours)):
        print(
            f"{name:24} {figures['candidates']:>10} {figures['skipped']:>8} "
            f"{figures['replacements']:>9} {figures['mismatched']:>4} ({share(figures):.3f}) "
            f"{figures['fluent']:>7.3f} {figures['seconds']:>8.1f}"
        )
    print(
        f"RESULT lexicon_slots mismatch={share(ours):.3f} baseline_mismatch={share(baseline):.3f} "
        f"candidates={ours['candidates']} baseline_candidates={baseline['candidates']} "
        f"seconds={ours['seconds']:.1f} baseline_seconds={baseline['seconds']:.1f}"
    )


if __name__ == "__main__":
    main()
