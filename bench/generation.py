"""Benchmark: our generation pipeline on each engine, against a per-sentence loop and
against plain `generate()` of the same model (the ceiling).

Everything runs in this process on the same model, originals and settings:

- **ours**, once per engine (`generation.engines`): `loop` (our batched loop), `continuous`
  (transformers' continuous batching) and, with a server, `server` (an OpenAI-compatible
  inference server); each end to end: blanks, prompts, decoding, parsing, dedupe, edits,
  codes, relationships, fluency filter;
- **baseline**: polyjuice-nlp's `perturb()` shape, one original at a time, its prompts
  through a transformers text-generation pipeline, each candidate parsed, diffed and
  scored for fluency on its own (the `ratio`);
- **ceiling**: one batched `model.generate()` over the same prompts with the same
  sampling and budgets, decoding only (no parsing, no annotation): the `ceiling_ratio`
  is our sequences per second end to end over its sequences per second, the
  `decode_ceiling_ratio` the same with our decoding alone (engine against engine).

    python bench/generation.py --quick            # ~15 minutes on 2 CPU cores, with a server
    python bench/generation.py --originals 344 --device cuda --batch-size 512
    python bench/generation.py --backend server --base-url http://gpu:8000/v1 --model NAME
    python bench/generation.py --start-server     # also through `transformers serve`
    python bench/generation.py --labeled          # labeled originals, label-directed prompts

By default the originals are unlabeled sentences prompted as Polyjuice prompts them;
`--labeled` takes labeled ones and prompts them as a campaign of labeled data is
prompted (every side decodes the same `plan_prompts`).

On a machine without package registries, `bench/gpu/run.sh` installs from carried
wheels and runs the GPU benchmark (see docs/benchmarks.md). The last line reads
`RESULT generation ratio=... cands_per_s=... kept_per_s=... ceiling_ratio=... ...`.
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

from generation import annotation_pool  # noqa: E402
from generation.annotation_pool import default_workers  # noqa: E402
from generation.cad_sentiment import held_out_originals, sentiment_pairs  # noqa: E402
from generation.constraints import special_token_texts  # noqa: E402
from generation.control_codes import detect_code  # noqa: E402
from generation.decoding import DecodingConfig, StopWhenAnswered, newline_token_ids  # noqa: E402
from generation.edits import compute_edit  # noqa: E402
from generation.engines import ServerConfig, make_engine, resolve_engine  # noqa: E402
from generation.engines.continuous import ATTENTIONS, ContinuousEngine  # noqa: E402
from generation.fluency import FluencyItem, fluency_scores, readable  # noqa: E402
from generation.metrics import embedding_distances, self_bleu, token_levenshtein  # noqa: E402
from generation.models import DEFAULT_MODEL, load_causal_lm  # noqa: E402
from generation.parsing import SPACY_MODEL, ParseCache, load_nlp  # noqa: E402
from generation.pipeline import PipelineSettings, run_polyjuice  # noqa: E402
from generation.polyjuice import PerturbTarget, PolyjuiceSettings, plan_prompts  # noqa: E402
from generation.precision import add_dtype_argument  # noqa: E402
from generation.records import OriginalRecord  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "cad"


SENTIMENT_LABELS = ("Negative", "Positive")


def load_originals(
    count: int, seed: int, data: Path = SHARED, *, labeled: bool = False
) -> list[OriginalRecord]:
    """Short sentences from CAD: first sentences of IMDb reviews and SNLI hypotheses,
    without labels (Polyjuice's own prompts); `labeled`, first sentences of sentiment
    reviews with their labels, which a campaign of labeled data prompts label-directed."""
    if labeled:
        pairs = sentiment_pairs(data, "dev")
        return held_out_originals(pairs, count, seed=seed).originals
    return [
        OriginalRecord(f"x{index}", text, "")
        for index, text in enumerate(_unlabeled_texts(count, seed, data))
    ]


def _unlabeled_texts(count: int, seed: int, data: Path) -> list[str]:
    nlp = load_nlp()
    texts: list[str] = []
    with (data / "sentiment_combined_paired" / "dev_paired.tsv").open(encoding="utf-8") as f:
        reviews = [row["Text"].replace("<br />", " ") for row in csv.DictReader(f, delimiter="\t")]
    for doc in nlp.pipe(reviews[::2][:200]):
        first = next(iter(doc.sents)).text.strip()
        if 6 <= len(first.split()) <= 22:
            texts.append(first)
    with (data / "NLI_original" / "dev.tsv").open(encoding="utf-8") as f:
        texts += [row["sentence2"] for row in csv.DictReader(f, delimiter="\t")][:200]
    random.Random(seed).shuffle(texts)
    return texts[:count]


def run_baseline(originals, settings: PipelineSettings, lm, fluency_lm, threshold: float):
    """One original at a time, one prompt per pipeline call, one candidate scored at a time,
    on the very prompts and budgets ours decodes (`plan_prompts`)."""
    from transformers import StoppingCriteriaList, pipeline

    generator = pipeline(
        "text-generation", model=lm.model, tokenizer=lm.tokenizer, device=lm.device
    )
    decoding = settings.polyjuice.decoding
    nlp = load_nlp()
    specials = special_token_texts(lm.tokenizer)
    kept, produced = 0, 0
    started = time.perf_counter()
    plan = prompt_plan(originals, settings, lm)
    newline_ids = newline_token_ids(lm.tokenizer) if plan.strategy.stops_at_newline else set()
    seen: dict[str, set[str]] = {}
    docs: dict[str, object] = {}
    for index, (target, request) in enumerate(plan.requests):
        text = target.original.text
        if text not in docs:
            docs[text] = nlp(text)
        doc = docs[text]
        prompt = plan.prompts[index].text
        prompt_length = len(lm.tokenizer(prompt, add_special_tokens=False)["input_ids"])
        # The same answer budget and stopping rule as ours, one prompt at a time.
        way = plan.strategies[index]
        needed = [way.answers_needed(request)] * decoding.per_prompt
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
            max_new_tokens=plan.budgets[index],
            return_full_text=False,
            pad_token_id=lm.tokenizer.pad_token_id,
            stopping_criteria=stopping,
        )
        for output in outputs:
            candidate = way.parse(request, output["generated_text"], specials)
            known = seen.setdefault(text, set())
            if candidate is None or candidate in known or candidate.lower() == text.lower():
                continue
            known.add(candidate)
            produced += 1
            if not all(readable(fluency_lm, [text, candidate])):
                continue  # dropped as `too_long`, as ours drops it
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


def plain_generate(lm, prompts: list[str], budgets: list[int], decoding, batch_size: int):
    """The ceiling: `model.generate()` over the prompts in batches, same sampling and
    budgets (each batch decodes to its longest budget), `per_prompt` sequences each.
    Returns (sequences, seconds)."""
    import torch

    tokenizer = lm.tokenizer
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    sequences = 0
    if lm.device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    with torch.inference_mode():
        for position in range(0, len(order), batch_size):
            indices = order[position : position + batch_size]
            encoded = tokenizer(
                [prompts[i] for i in indices],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            ).to(lm.device)
            output = lm.model.generate(
                **encoded,
                do_sample=True,
                temperature=decoding.temperature,
                top_p=decoding.top_p,
                top_k=decoding.top_k,
                num_return_sequences=decoding.per_prompt,
                max_new_tokens=max(budgets[i] for i in indices),
                pad_token_id=tokenizer.pad_token_id,
            )
            sequences += output.shape[0]
    if lm.device.type == "cuda":
        torch.cuda.synchronize()
    return sequences, time.perf_counter() - started


def prompt_plan(originals, settings: PipelineSettings, lm):
    """The prompts our pipeline decodes for these originals (same blanks, same labels)."""
    targets = [PerturbTarget(original) for original in originals]
    return plan_prompts(targets, settings.polyjuice, ParseCache(), lm.tokenizer, str(lm.name))


def ceiling_inputs(originals, settings: PipelineSettings, lm):
    """The prompts (whole) and budgets our pipeline decodes for these originals."""
    plan = prompt_plan(originals, settings, lm)
    return [parts.text for parts in plan.prompts], plan.budgets


def run_engine(engine, originals, settings, fluency_lm):
    """Our pipeline end to end on one engine: (result, seconds)."""
    targets = [PerturbTarget(original) for original in originals]
    started = time.perf_counter()
    result = run_polyjuice(
        targets, settings, engine=engine, fluency_lm=fluency_lm, parses=ParseCache()
    )
    return result, time.perf_counter() - started


def start_loopback_server(model: str, device: str):
    """`transformers serve` on a free loopback port with `model` (continuous batching on
    a GPU): (server, base URL, the model name it serves)."""
    import tempfile

    from bench.inference_server import TransformersServer, sampling_model_directory
    from generation.models import default_model_directory

    directory = default_model_directory() if model == DEFAULT_MODEL else Path(model)
    scratch = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    # Sampled like the in-process engines (the server samples only if the model says so).
    directory = sampling_model_directory(directory, scratch / "model")
    log = scratch / "serve.log"
    server = TransformersServer(
        directory, log, device=device, continuous_batching=device.startswith("cuda")
    )
    server.wait_ready()
    print(f"server:    transformers serve at {server.url} (log {log})")
    return server, server.url, server.model


def arguments() -> argparse.Namespace:
    """The command line, with `--quick`'s sizes applied."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="Small run, ~15 minutes on 2 CPU cores (6 of them through `transformers serve`, "
        "which answers one request at a time on CPU).",
    )
    parser.add_argument("--originals", type=int, default=24)
    parser.add_argument(
        "--baseline-originals",
        type=int,
        default=None,
        help="Originals for the (slow) baseline; default: same as --originals; 0 skips it.",
    )
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--fluency-model", default=DEFAULT_MODEL, help="The LM of the fluency filter."
    )
    parser.add_argument("--strategy", default="auto")
    parser.add_argument("--device", default="auto")
    add_dtype_argument(parser)
    parser.add_argument(
        "--engines",
        default="loop,continuous",
        help="In-process engines to run, comma-separated: loop, continuous, or "
        "continuous:ATTENTION (varlen: packed attention, PyTorch's flash kernel on CUDA; "
        "sdpa: transformers' masked attention), to compare attentions on the same originals.",
    )
    parser.add_argument(
        "--continuous-batching",
        default="",
        help="Continuous batching settings that replace the engine's, e.g. "
        "use_cuda_graph=true,max_batch_tokens=65536 (transformers' ContinuousBatchingConfig).",
    )
    parser.add_argument(
        "--backend",
        default="inprocess",
        choices=["inprocess", "server"],
        help="server: generate only through --base-url (an OpenAI-compatible server).",
    )
    parser.add_argument("--base-url", help="The inference server, e.g. http://gpu:8000/v1.")
    parser.add_argument("--server-model", help="Its model name (default: --model).")
    parser.add_argument(
        "--server-api",
        default="completions",
        choices=["auto", "completions", "chat"],
        help="completions (default) sends the very prompts the in-process engines decode.",
    )
    parser.add_argument(
        "--server-concurrency",
        type=int,
        default=None,
        help="Requests in flight (default: 64 on a GPU, 4 on CPU, where the server started "
        "here answers one at a time and a long queue only runs into the timeout).",
    )
    parser.add_argument(
        "--start-server",
        action="store_true",
        help="Start `transformers serve` on loopback with --model and run through it too.",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--codes", default="negation,lexical,resemantic,insert,delete")
    parser.add_argument("--blank-sets", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ceiling", action="store_true", help="Skip plain generate().")
    parser.add_argument("--no-quality", action="store_true", help="Skip the quality figures.")
    parser.add_argument("--json", help="Also write the figures to this file.")
    parser.add_argument("--data", type=Path, default=SHARED, help="The CAD data folder.")
    parser.add_argument(
        "--labeled",
        action="store_true",
        help="Labeled originals (CAD sentiment first sentences), prompted label-directed as "
        "a campaign of labeled data is: the smallest edit to the other label, a rewrite "
        "from a point on. Without it: unlabeled sentences, Polyjuice's own prompts.",
    )
    parser.add_argument(
        "--no-label-directed",
        dest="label_directed",
        action="store_false",
        help="With --labeled: Polyjuice's own prompts on the same labeled originals.",
    )
    args = parser.parse_args()
    args.continuous_batching = batching_overrides(args.continuous_batching)
    engine_specs_check(args.engines)
    if args.quick:
        args.originals, args.baseline_originals = 8, 3
        args.codes, args.blank_sets = "negation,lexical,insert", 1
        args.start_server = args.start_server or args.backend == "inprocess"
    return args


def models_load(args: argparse.Namespace):
    """(the fluency filter's LM, the generating LM): the same one when the names match; no
    generating LM when nothing here decodes (a server and no ceiling)."""
    fluency_lm = load_causal_lm(args.fluency_model, device=args.device, dtype=args.dtype)
    lm = None
    if args.backend == "inprocess" or not args.no_ceiling:
        lm = fluency_lm if args.model == args.fluency_model else None
        lm = lm or load_causal_lm(args.model, device=args.device, dtype=args.dtype)
    return fluency_lm, lm


def pipeline_settings(args: argparse.Namespace) -> PipelineSettings:
    return PipelineSettings(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        polyjuice=PolyjuiceSettings(
            codes=tuple(args.codes.split(",")),
            strategy=args.strategy,
            random_blank_sets=args.blank_sets,
            seed=args.seed,
            decoding=DecodingConfig(per_prompt=3, batch_size=args.batch_size, seed=args.seed),
            label_choices=SENTIMENT_LABELS if args.labeled else (),
            label_directed=args.label_directed,
        ),
    )


def server_engine(args: argparse.Namespace, base_url: str, served_model: str, device):
    """The engine that generates through the OpenAI-compatible server at `base_url`."""
    return make_engine(
        "server",
        server=ServerConfig(
            base_url=base_url,
            model=args.server_model or served_model,
            api=args.server_api,
            concurrency=args.server_concurrency or (64 if str(device).startswith("cuda") else 4),
            timeout=120.0,
        ),
    )


def in_process_engine(spec: str, lm, batching: dict):
    """(label, engine) for `loop`, `continuous` or `continuous:ATTENTION`."""
    name, _, attention = spec.partition(":")
    if name == "continuous":
        return spec, ContinuousEngine(lm, attention=attention or "auto", batching=batching)
    return spec, make_engine(name, lm=lm)


def engine_specs_check(specs: str) -> None:
    """Refuses, by name, an engine or attention `--engines` does not know."""
    for spec in filter(None, specs.split(",")):
        name, _, attention = spec.partition(":")
        if name not in ("loop", "continuous"):
            raise SystemExit(f"bench: unknown in-process engine {name!r} (loop, continuous)")
        if attention and name != "continuous":
            raise SystemExit(f"bench: only continuous takes an attention (got {spec!r})")
        if attention and attention not in ATTENTIONS:
            raise SystemExit(f"bench: unknown attention {attention!r} ({', '.join(ATTENTIONS)})")


def batching_overrides(text: str) -> dict:
    """`key=value,...` as settings: integers, floats, true/false, none, else strings."""
    words = {"true": True, "false": False, "none": None}
    settings = {}
    for item in filter(None, text.split(",")):
        key, separator, value = item.partition("=")
        if not separator:
            raise SystemExit(f"bench: --continuous-batching wants key=value (got {item!r})")
        for kind in (int, float):
            try:
                settings[key.strip()] = kind(value)
                break
            except ValueError:
                continue
        else:
            settings[key.strip()] = words.get(value.lower(), value)
    return settings


def annotation_pool_start() -> None:
    """Start the annotation workers and wait for them, before any engine is timed.

    A run starts them as decoding begins, but they are kept for the life of the process:
    without this the first engine measured pays their start and the others do not
    (2026-11-27, H100: 7.9 s of the first engine's 20.0 s, against 0.1 s for the next)."""
    workers = default_workers()
    if workers:
        for ready in annotation_pool.warm(workers=workers, model=SPACY_MODEL):
            ready.result()


def fluency_warm(fluency_lm, texts: list[str], batch_size: int = 64) -> None:
    """Score the originals in full batches once, before any engine is timed.

    Each engine's warm-up scores one original's few candidates; the timed run's full
    batches then load more kernels, once per process: without this the first engine
    measured pays for them and the others do not (2026-11-27, H100: fluency 4.5 s in the
    first engine's run against 0.9 s in the next, on the same candidates)."""
    from generation.fluency import sentence_logprobs

    repeats = -(-2 * batch_size // max(1, len(texts)))  # two full batches at least
    sentence_logprobs(fluency_lm, texts * repeats, batch_size=batch_size)


def engine_measure(label: str, engine, originals, settings: PipelineSettings, fluency_lm):
    """Our pipeline on one engine, warmed once, then timed and printed: (figures, result)."""
    # Warm each engine once (CUDA kernels and graphs, tokenizer caches, the server).
    run_engine(engine, originals[:1], settings, fluency_lm)
    result, seconds = run_engine(engine, originals, settings, fluency_lm)
    sequences = result.prompts * settings.polyjuice.decoding.per_prompt
    figures = {
        "seconds": seconds,
        "prompts": result.prompts,
        "seqs_per_s": sequences / seconds,
        # Decoding alone, as plain `generate()` is timed: what the engines compare on.
        "decode_seqs_per_s": sequences / result.seconds["generate"],
        "cands_per_s": len(result.candidates) / seconds,
        "kept_per_s": len(result.kept) / seconds,
    }
    print(
        f"ours/{label:<10} {len(originals)} originals, {result.prompts} prompts, "
        f"{sequences} sequences, {len(result.candidates)} candidates, "
        f"{len(result.kept)} kept in {seconds:.2f}s = {sequences / seconds:.1f} seqs/s, "
        f"{figures['cands_per_s']:.1f} candidates/s, "
        f"{figures['kept_per_s']:.1f} kept/s "
        f"(seconds: {', '.join(f'{k} {v:.1f}' for k, v in result.seconds.items())})"
        + (f" [attention {engine.attention}]" if hasattr(engine, "attention") else "")
    )
    return figures, result


def engines_measure(
    args: argparse.Namespace, originals, settings: PipelineSettings, lm, fluency_lm
):
    """Every engine asked for, and the server (started here with --start-server):
    (figures by engine label, results by engine label: `loop`, `continuous:sdpa`, `server`...)."""
    engines = []
    if args.backend == "inprocess":
        engines = [
            in_process_engine(spec, lm, args.continuous_batching)
            for spec in args.engines.split(",")
            if spec
        ]
    server_process, base_url, served_model = None, args.base_url, args.model
    if args.start_server and not base_url:
        server_process, base_url, served_model = start_loopback_server(
            args.model, str(fluency_lm.device)
        )
    try:
        if base_url:
            server = server_engine(args, base_url, served_model, fluency_lm.device)
            engines.append(("server", server))
        figures, results = {}, {}
        for label, engine in engines:
            figures[label], results[label] = engine_measure(
                label, engine, originals, settings, fluency_lm
            )
    finally:
        if server_process is not None:
            server_process.stop()
    return figures, results


def main_engine(figures: dict, lm) -> str:
    """The engine the headline figures are ours on."""
    in_process = [name for name in figures if name != "server"]
    # The engine `auto` picks on this device is the one a campaign gets by default.
    default = resolve_engine("auto", lm.device) if lm is not None else "server"
    return default if default in figures else (in_process or list(figures))[0]


def ceiling_measure(lm, originals, settings: PipelineSettings, batch_size: int, ours: dict) -> dict:
    """Plain `generate()` over the prompts ours decodes, warmed on eight, timed and printed."""
    decoding = settings.polyjuice.decoding
    prompts, budgets = ceiling_inputs(originals, settings, lm)
    plain_generate(lm, prompts[:8], budgets[:8], decoding, batch_size)
    sequences, seconds = plain_generate(lm, prompts, budgets, decoding, batch_size)
    ceiling = sequences / seconds
    ratio = ours["seqs_per_s"] / ceiling
    decode_ratio = ours["decode_seqs_per_s"] / ceiling
    print(
        f"ceiling:   plain generate() of {len(prompts)} prompts x {decoding.per_prompt}: "
        f"{sequences} sequences in {seconds:.2f}s = {ceiling:.1f} seqs/s "
        f"(decoding only; ours/ceiling {ratio:.3f} end to end, {decode_ratio:.3f} decoding alone)"
    )
    return {
        "ceiling_seqs_per_s": ceiling,
        "ceiling_ratio": ratio,
        "decode_ceiling_ratio": decode_ratio,
    }


def baseline_measure(
    originals, count: int, settings: PipelineSettings, lm, fluency_lm, ours: dict
) -> dict:
    """The per-sentence baseline on the first `count` originals, timed and printed."""
    kept, produced, seconds = run_baseline(
        originals[:count], settings, lm, fluency_lm, settings.fluency_threshold
    )
    processed = produced / seconds
    print(
        f"baseline:  {count} originals, {produced} candidates, {kept} "
        f"kept in {seconds:.2f}s = {processed:.2f} candidates/s, "
        f"{kept / seconds:.2f} kept/s"
    )
    return {
        "ratio": ours["cands_per_s"] / processed if processed else float("inf"),
        "baseline_cands_per_s": processed,
        "baseline_kept_per_s": kept / seconds,
    }


def result_print(record: dict, json_path: str | None) -> None:
    """The RESULT line (the ratio first), also written as JSON to `json_path` if given."""
    ordered = {"ratio": record.pop("ratio", float("nan")), **record}
    if json_path:
        Path(json_path).write_text(json.dumps(ordered, indent=2))
    print(
        "RESULT generation "
        + " ".join(
            f"{key}={value:.3f}" if isinstance(value, float) else f"{key}={value}"
            for key, value in ordered.items()
        )
    )


def main() -> int:
    args = arguments()
    if not args.data.exists():
        print(f"bench: the CAD data is missing at {args.data}", file=sys.stderr)
        return 2
    if args.backend == "server" and not args.base_url:
        print("bench: --backend server needs --base-url", file=sys.stderr)
        return 2
    baseline_count = args.originals if args.baseline_originals is None else args.baseline_originals

    # 1. The data, the models and the settings every run shares.
    originals = load_originals(args.originals, args.seed, args.data, labeled=args.labeled)
    fluency_lm, lm = models_load(args)
    settings = pipeline_settings(args)
    if lm is not None:
        plan = prompt_plan(originals, settings, lm)
        directed = sum(1 for _, request in plan.requests if request.target_label)
        print(f"prompts:   {len(plan.requests)} per run, {directed} of them label-directed")

    # 2. Ours on every engine; the headline is the engine a campaign gets by default.
    annotation_pool_start()
    fluency_warm(fluency_lm, [original.text for original in originals])
    figures, results = engines_measure(args, originals, settings, lm, fluency_lm)
    main_name = main_engine(figures, lm)
    ours = figures[main_name]
    record = {
        "engine": main_name,
        "cands_per_s": ours["cands_per_s"],
        "kept_per_s": ours["kept_per_s"],
        "seqs_per_s": ours["seqs_per_s"],
    }
    for name, values in figures.items():
        record[f"{name.replace(':', '_')}_kept_per_s"] = values["kept_per_s"]
    if "server" in figures:
        record["server_kept_per_s"] = figures["server"]["kept_per_s"]

    # 3. The ceiling, the baseline and the quality of ours.
    if lm is not None and not args.no_ceiling:
        record.update(ceiling_measure(lm, originals, settings, args.batch_size, ours))
    if baseline_count and lm is not None:
        record.update(baseline_measure(originals, baseline_count, settings, lm, fluency_lm, ours))
    if not args.no_quality:
        quality_figures = quality(results[main_name], settings)
        print("quality:  " + ", ".join(f"{k}={v:.3f}" for k, v in quality_figures.items()))
        record.update(quality_figures)

    # 4. The report.
    device = str(fluency_lm.device)
    prompts = "label-directed" if args.labeled and args.label_directed else "polyjuice"
    print(
        f"model {args.model} on {device} ({fluency_lm.dtype}); codes {args.codes}; "
        f"{'labeled' if args.labeled else 'unlabeled'} originals, {prompts} prompts"
    )
    record["device"] = device
    record["prompts"] = prompts
    if lm is not None:
        record["label_directed_prompts"] = directed
    result_print(record, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
