"""Benchmark: our batched generation pipeline against a polyjuice-nlp style loop.

Both run in this process on the same model, prompts and settings. The baseline
mirrors polyjuice-nlp's `perturb()`: one original at a time, its prompts through a
transformers text-generation pipeline, each candidate parsed, diffed and scored
for fluency on its own. Ours sends all originals' prompts through batched
decoding and scores candidates in batches.

    python bench/generation.py --quick          # ~1 minute on 2 CPU cores
    python bench/generation.py --originals 64 --device cuda

The last line reads `RESULT generation ratio=... cands_per_s=... ...`.
"""

import argparse
import csv
import json
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generation.blanks import blanked_text, random_blank_sets  # noqa: E402
from generation.control_codes import detect_code  # noqa: E402
from generation.decoding import DecodingConfig, StopWhenAnswered, newline_token_ids  # noqa: E402
from generation.edits import compute_edit  # noqa: E402
from generation.fluency import FluencyItem, fluency_scores  # noqa: E402
from generation.metrics import embedding_distances, self_bleu, token_levenshtein  # noqa: E402
from generation.models import DEFAULT_MODEL, load_causal_lm  # noqa: E402
from generation.parsing import ParseCache, load_nlp  # noqa: E402
from generation.pipeline import PipelineSettings, run_polyjuice  # noqa: E402
from generation.polyjuice import PerturbTarget, PolyjuiceSettings, answer_budgets  # noqa: E402
from generation.records import OriginalRecord  # noqa: E402
from generation.strategies import PromptRequest, strategy_for  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "cad"


def load_originals(count: int, seed: int) -> list[str]:
    """Short sentences from CAD: first sentences of IMDb reviews and SNLI hypotheses."""
    nlp = load_nlp()
    texts: list[str] = []
    with (SHARED / "sentiment_combined_paired" / "dev_paired.tsv").open(encoding="utf-8") as f:
        reviews = [row["Text"].replace("<br />", " ") for row in csv.DictReader(f, delimiter="\t")]
    for doc in nlp.pipe(reviews[::2][:200]):
        first = next(iter(doc.sents)).text.strip()
        if 6 <= len(first.split()) <= 22:
            texts.append(first)
    with (SHARED / "NLI_original" / "dev.tsv").open(encoding="utf-8") as f:
        texts += [row["sentence2"] for row in csv.DictReader(f, delimiter="\t")][:200]
    random.Random(seed).shuffle(texts)
    return texts[:count]


def run_baseline(texts, settings: PipelineSettings, lm, fluency_lm, threshold: float):
    """One original at a time, one prompt per pipeline call, one candidate scored at a time."""
    from transformers import StoppingCriteriaList, pipeline

    generator = pipeline(
        "text-generation", model=lm.model, tokenizer=lm.tokenizer, device=lm.device
    )
    strategy = strategy_for(settings.polyjuice.strategy, lm.tokenizer)
    decoding = settings.polyjuice.decoding
    nlp = load_nlp()
    rng = random.Random(settings.polyjuice.seed)
    newline_ids = newline_token_ids(lm.tokenizer) if strategy.stops_at_newline else set()
    kept, produced = 0, 0
    started = time.perf_counter()
    for text in texts:
        doc = nlp(text)
        blank_sets = random_blank_sets(
            doc,
            rng,
            count=settings.polyjuice.random_blank_sets,
            include_sentence=settings.polyjuice.sentence_blank,
        )
        seen = set()
        for blank_set in blank_sets:
            for code in settings.polyjuice.codes:
                request = PromptRequest(text, code, blanked_text(doc, blank_set))
                prompt = strategy.render(request)
                prompt_length = len(lm.tokenizer(prompt, add_special_tokens=False)["input_ids"])
                # The same answer budget and stopping rule as ours, one prompt at a time.
                budget = answer_budgets(lm.tokenizer, [request], decoding)[0]
                needed = [strategy.answers_needed(request)] * decoding.per_prompt
                stopping = StoppingCriteriaList(
                    [StopWhenAnswered(lm.tokenizer, prompt_length, needed, newline_ids)]
                )
                outputs = generator(
                    prompt,
                    do_sample=True,
                    temperature=decoding.temperature,
                    top_p=decoding.top_p,
                    top_k=decoding.top_k,
                    num_return_sequences=decoding.per_prompt,
                    max_new_tokens=budget,
                    return_full_text=False,
                    pad_token_id=lm.tokenizer.pad_token_id,
                    stopping_criteria=stopping,
                )
                for output in outputs:
                    candidate = strategy.parse(request, output["generated_text"])
                    if candidate is None or candidate in seen or candidate.lower() == text.lower():
                        continue
                    seen.add(candidate)
                    produced += 1
                    x_hat = nlp(candidate)
                    edit = compute_edit(doc, x_hat)
                    detect_code(doc, x_hat, edit)
                    item = FluencyItem(
                        text,
                        candidate,
                        tuple((op.source_chars, op.target_chars) for op in edit.ops),
                    )
                    if fluency_scores(fluency_lm, [item], batch_size=1)[0].passes(threshold):
                        kept += 1
    return kept, produced, time.perf_counter() - started


def quality(result, settings: PipelineSettings) -> dict[str, float]:
    """Fluency pass rate, control-code success (A.3.1), self-BLEU and closeness."""
    candidates = result.candidates
    kept = result.kept
    by_prompt: dict[tuple[str, str, str], list] = {}
    for candidate in candidates:
        key = (
            candidate.record.original_key,
            candidate.record.control_code,
            candidate.record.prompt,
        )
        by_prompt.setdefault(key, []).append(candidate)
    successes = [
        any(c.code == code for c in group[:3]) for (_, code, _), group in by_prompt.items()
    ]
    originals = {o.key: o.text for o in result.originals}
    by_original: dict[str, list[str]] = {}
    for candidate in kept:
        by_original.setdefault(candidate.record.original_key, []).append(candidate.record.text)
    bleus = [score for texts in by_original.values() if (score := self_bleu(texts)) is not None]
    levenshtein = [
        token_levenshtein(
            originals[c.record.original_key].lower().split(), c.record.text.lower().split()
        )
        for c in kept
    ]
    semantic = (
        embedding_distances(
            [originals[c.record.original_key] for c in kept], [c.record.text for c in kept]
        )
        if kept
        else []
    )
    mean = lambda values: statistics.fmean(values) if values else float("nan")  # noqa: E731
    return {
        "fluency_pass": len(kept) / len(candidates) if candidates else float("nan"),
        "code_success": mean([float(s) for s in successes]),
        "self_bleu": mean(bleus),
        "levenshtein": mean(levenshtein),
        "embedding_distance": mean(semantic),
        "malformed_rate": result.malformed
        / max(1, result.prompts * settings.polyjuice.decoding.per_prompt),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="Small run, about a minute on CPU.")
    parser.add_argument("--originals", type=int, default=24)
    parser.add_argument(
        "--baseline-originals",
        type=int,
        default=None,
        help="Originals for the (slow) baseline; default: same as --originals.",
    )
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--strategy", default="auto")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--codes", default="negation,lexical,resemantic,insert,delete")
    parser.add_argument("--blank-sets", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="Also write the figures to this file.")
    args = parser.parse_args()
    if not SHARED.exists():
        print(f"bench: the CAD data is missing at {SHARED}", file=sys.stderr)
        return 2
    if args.quick:
        args.originals, args.baseline_originals = 8, 3
        args.codes, args.blank_sets = "negation,lexical,insert", 1
    baseline_count = args.baseline_originals or args.originals

    texts = load_originals(args.originals, args.seed)
    lm = load_causal_lm(args.model, device=args.device)
    fluency_lm = (
        lm if args.model == DEFAULT_MODEL else load_causal_lm(DEFAULT_MODEL, device=args.device)
    )
    settings = PipelineSettings(
        model=args.model,
        device=args.device,
        polyjuice=PolyjuiceSettings(
            codes=tuple(args.codes.split(",")),
            strategy=args.strategy,
            random_blank_sets=args.blank_sets,
            seed=args.seed,
            decoding=DecodingConfig(per_prompt=3, batch_size=args.batch_size, seed=args.seed),
        ),
    )
    threshold = settings.fluency_threshold
    parses = ParseCache()
    # Warm both paths once (CUDA kernels, tokenizer caches) on a throwaway original.
    run_polyjuice(
        [PerturbTarget(OriginalRecord("warm", texts[0], ""))],
        settings,
        lm=lm,
        fluency_lm=fluency_lm,
        parses=ParseCache(),
    )

    targets = [PerturbTarget(OriginalRecord(f"x{i}", text, "")) for i, text in enumerate(texts)]
    started = time.perf_counter()
    result = run_polyjuice(targets, settings, lm=lm, fluency_lm=fluency_lm, parses=parses)
    ours_seconds = time.perf_counter() - started
    # Speed is compared on candidates fully processed (parsed, diffed, coded, scored):
    # both sides do the same work per candidate, while how many pass the filter is
    # sampling luck on small runs and is reported as the fluency pass rate instead.
    ours_processed = len(result.candidates) / ours_seconds
    ours_rate = len(result.kept) / ours_seconds

    base_kept, base_produced, base_seconds = run_baseline(
        texts[:baseline_count], settings, lm, fluency_lm, threshold
    )
    base_processed = base_produced / base_seconds
    base_rate = base_kept / base_seconds
    ratio = ours_processed / base_processed if base_processed else float("inf")
    figures = quality(result, settings)

    device = str(lm.device)
    print(
        f"model {args.model} on {device} ({lm.dtype}); strategy "
        f"{strategy_for(args.strategy, lm.tokenizer).name}; codes {args.codes}"
    )
    print(
        f"ours:     {len(texts)} originals, {result.prompts} prompts, {len(result.candidates)} "
        f"candidates, {len(result.kept)} kept in {ours_seconds:.2f}s = "
        f"{ours_processed:.2f} candidates/s, {ours_rate:.2f} kept/s "
        f"(seconds: {', '.join(f'{k} {v:.1f}' for k, v in result.seconds.items())})"
    )
    print(
        f"baseline: {baseline_count} originals, {base_produced} candidates, {base_kept} kept in "
        f"{base_seconds:.2f}s = {base_processed:.2f} candidates/s, {base_rate:.2f} kept/s"
    )
    print("quality:  " + ", ".join(f"{key}={value:.3f}" for key, value in figures.items()))
    record = {
        "ratio": ratio,
        "cands_per_s": ours_processed,
        "kept_per_s": ours_rate,
        "baseline_cands_per_s": base_processed,
        "baseline_kept_per_s": base_rate,
        "device": device,
        **figures,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2))
    print(
        "RESULT generation "
        + " ".join(
            f"{key}={value:.3f}" if isinstance(value, float) else f"{key}={value}"
            for key, value in record.items()
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
