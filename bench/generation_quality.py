"""Benchmark: the quality of our generation pipeline, with and without its filters.

On first sentences of CAD sentiment dev reviews (held out from the classifier's
training pairs), the pipeline as the app runs it ("ours") and the same decoded
candidates with the sanity filters off ("filters off"; constrained decoding has no
switch and is on in both), scored by `generation.quality_report`: leaks, malformed
rate, fluency pass, control-code success, predicted flip rate of kept and selected
candidates, self-BLEU (of whole candidates and of the words their edits wrote),
closeness. Figures and what they mean: docs/generation-quality.md.

    python bench/generation_quality.py --quick     # ~3 minutes on 2 CPU cores
    python bench/generation_quality.py --originals 100 --device cuda
    python bench/generation_quality.py --backend server --base-url http://gpu:8000/v1 \
        --server-model Qwen/Qwen2.5-7B          # a large model behind vLLM, SGLang, TGI...

The last line reads `RESULT generation_quality leaks=... malformed=... flip_selected=...
fluency=... flip_kept=... code_success=... self_bleu=... self_bleu_5=... self_bleu_selected=...
self_bleu_edits=... self_bleu_edits_5=... levenshtein=... classifier_accuracy=...`.
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generation.cad_sentiment import CAD_LABELS, DEFAULT_CAD, SENTIMENT_FOLDER  # noqa: E402
from generation.decoding import DecodingConfig  # noqa: E402
from generation.engines import SERVER_APIS, ServerConfig  # noqa: E402
from generation.engines.server import InferenceServerError  # noqa: E402
from generation.models import DEFAULT_MODEL, load_causal_lm  # noqa: E402
from generation.pipeline import PipelineSettings  # noqa: E402
from generation.polyjuice import PolyjuiceSettings  # noqa: E402
from generation.precision import add_dtype_argument  # noqa: E402
from generation.quality_report import evaluate, format_table, result_line  # noqa: E402
from generation.selection import DEFAULT_FLIP_WEIGHT  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 originals, ~3 minutes on CPU.")
    parser.add_argument("--originals", type=int, default=40)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--fluency-model", default=DEFAULT_MODEL, help="The LM of the fluency filter."
    )
    parser.add_argument("--device", default="auto")
    add_dtype_argument(parser)
    parser.add_argument("--codes", default="negation,lexical,resemantic,insert,delete")
    parser.add_argument("--blank-sets", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=DecodingConfig().temperature)
    parser.add_argument("--top-p", type=float, default=DecodingConfig().top_p)
    parser.add_argument("--data", type=Path, default=DEFAULT_CAD, help="The CAD data folder.")
    parser.add_argument("--json", help="Also write every figure to this file.")
    parser.add_argument(
        "--no-label-directed",
        action="store_true",
        help="Label-agnostic prompts (the code before issue #21 item 3).",
    )
    parser.add_argument(
        "--flip-weight",
        type=float,
        default=DEFAULT_FLIP_WEIGHT,
        help=f"λ of selection's flip term (default {DEFAULT_FLIP_WEIGHT}); 0: diversity alone.",
    )
    parser.add_argument(
        "--in-loop-pairs",
        type=int,
        default=0,
        help="Labeled counterfactuals the classifier in the loop learns from (0).",
    )
    parser.add_argument(
        "--backend",
        default="inprocess",
        choices=["inprocess", "server"],
        help="server: generate through --base-url (an OpenAI-compatible server); the fluency "
        "filter and the classifiers stay in process.",
    )
    parser.add_argument("--base-url", help="The inference server, e.g. http://gpu:8000/v1.")
    parser.add_argument("--server-model", help="Its model name (default: --model).")
    parser.add_argument("--server-api", default="completions", choices=SERVER_APIS)
    parser.add_argument("--server-concurrency", type=int, default=16)
    args = parser.parse_args()
    if not (args.data / SENTIMENT_FOLDER).is_dir():
        print(f"bench: the CAD sentiment data is missing at {args.data}", file=sys.stderr)
        return 2
    if args.in_loop_pairs < 0:
        print("bench: --in-loop-pairs must be 0 or more", file=sys.stderr)
        return 2
    try:
        server = _server(args)
    except ValueError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 2
    if args.quick:
        args.originals = 10

    lm = None if server else load_causal_lm(args.model, device=args.device, dtype=args.dtype)
    fluency_lm = (
        lm
        if lm is not None and args.fluency_model == args.model
        else load_causal_lm(args.fluency_model, device=args.device, dtype=args.dtype)
    )
    settings = PipelineSettings(
        model=args.model,
        fluency_model=args.fluency_model,
        device=args.device,
        dtype=args.dtype,
        polyjuice=PolyjuiceSettings(
            codes=tuple(args.codes.split(",")),
            random_blank_sets=args.blank_sets,
            engine="server" if server else "auto",
            server=server,
            seed=args.seed,
            decoding=DecodingConfig(
                per_prompt=3,
                batch_size=args.batch_size,
                seed=args.seed,
                temperature=args.temperature,
                top_p=args.top_p,
            ),
            label_choices=() if args.no_label_directed else CAD_LABELS,
        ),
    )
    try:
        report = evaluate(
            settings,
            data=args.data,
            originals=args.originals,
            seed=args.seed,
            lm=lm,
            fluency_lm=fluency_lm,
            flip_weight=args.flip_weight,
            in_loop_pairs=args.in_loop_pairs,
        )
    except InferenceServerError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    print(format_table(report))
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    print(result_line(report))
    return 0


def _server(args: argparse.Namespace) -> ServerConfig | None:
    """The inference server of `--backend server`; None in process."""
    if args.backend != "server":
        if args.base_url:
            raise ValueError("--base-url needs --backend server")
        return None
    if not args.base_url:
        raise ValueError("--backend server needs --base-url")
    return ServerConfig(
        base_url=args.base_url,
        model=args.server_model or args.model,
        api=args.server_api,
        concurrency=args.server_concurrency,
    )


if __name__ == "__main__":
    raise SystemExit(main())
