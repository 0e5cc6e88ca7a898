"""`python -m generation train`: fine-tune a generator on paired data and print its quality table.

By default it reads every CAD sentiment and NLI pair file of the train split under
`../shared/data` (`generation.pairs.find_pair_sources`), holds out a share of the pairs
for early stopping, saves the best checkpoint to `--output`, and ends with the quality
report of that model on held-out CAD sentiment dev originals (`--no-report` skips it).
"""

import argparse
import random
from pathlib import Path

from generation.cad_sentiment import DEFAULT_CAD, SENTIMENT_FOLDER
from generation.cli_arguments import (
    check_model_output,
    number_above,
    number_at_least,
    share,
    whole_number_at_least,
)
from generation.pairs import Pair, paired_data, read_pairs
from generation.tokens import CONTROL_CODES
from generation.training import (
    PRECISIONS,
    TrainingConfig,
    TrainingReport,
    resolve_precision,
    train,
)

DEFAULT_DATA = DEFAULT_CAD.parent  # ../shared/data beside the checkout
REPORT_FILE = f"{SENTIMENT_FOLDER}/dev_paired.tsv"  # what the quality report perturbs


def read_training_pairs(args: argparse.Namespace) -> dict[str, list[Pair]]:
    """Pairs by source: the --pairs files when given, else every pair file under --data."""
    if args.pairs:
        options = {}
        if args.format == "tsv":
            options = {"x_column": args.x_column, "x_hat_column": args.x_hat_column}
        return {path: read_pairs(Path(path), args.format, **options) for path in args.pairs}
    splits = tuple(split.strip() for split in args.splits.split(",") if split.strip())
    return paired_data(Path(args.data), splits)


def check_pairs_files(paths: list[str] | None) -> None:
    """Each --pairs file exists and is a file, checked before any is read."""
    for path in paths or ():
        if not Path(path).exists():
            raise FileNotFoundError(f"--pairs {path}: no such file")
        if not Path(path).is_file():
            raise ValueError(f"--pairs {path}: a directory, not a file of pairs")


def report_data(args: argparse.Namespace) -> Path | None:
    """The CAD folder the quality table is computed on, checked before any training."""
    if args.no_report:
        return None
    if args.report_data:
        folder = Path(args.report_data)
    elif args.pairs:
        folder = DEFAULT_CAD
    else:
        found = sorted(Path(args.data).rglob(REPORT_FILE))
        folder = found[0].parent.parent if found else Path(args.data)
    if not (folder / REPORT_FILE).is_file():
        raise FileNotFoundError(
            f"no {REPORT_FILE} in {folder} for the quality table; "
            "name the CAD folder with --report-data or pass --no-report"
        )
    return folder


def quality_table(
    model: Path,
    data: Path,
    *,
    originals: int,
    codes: list[str] | None,
    device: str,
    seed: int,
    fluency_model: str | None = None,
) -> str:
    """The quality report of `model` on `originals` held-out CAD sentiment dev originals
    (the fluency filter's model: the packaged default unless named)."""
    from generation.decoding import DecodingConfig
    from generation.pipeline import PipelineSettings
    from generation.polyjuice import PolyjuiceSettings
    from generation.quality_report import evaluate, format_table

    settings = PipelineSettings(
        model=str(model),
        fluency_model=fluency_model,
        device=device,
        polyjuice=PolyjuiceSettings(
            codes=tuple(codes) if codes else PolyjuiceSettings().codes,
            seed=seed,
            decoding=DecodingConfig(seed=seed),
        ),
    )
    return format_table(evaluate(settings, data=data, originals=originals, seed=seed))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _pace(steps: int, seconds: float) -> str:
    """Steps a second, or seconds a step where a step takes more than one (a CPU's)."""
    if steps >= seconds:
        return f"{steps / seconds:.1f} steps/s"
    return f"{seconds / max(steps, 1):.1f} s/step"


def training_summary(report: TrainingReport) -> str:
    lines = [f"{count} pairs from {name}" for name, count in report.sources.items()]
    where = f" on {report.device}" if report.device else ""
    arithmetic = f" in {report.precision}" if report.precision else ""
    lines.append(
        f"{report.train_pairs} pairs trained on ({report.train_examples} prompts), "
        f"{report.eval_pairs} held out ({report.eval_examples} prompts); "
        f"{_count(report.steps, 'step')}{where}{arithmetic}"
    )
    for evaluation in report.evaluations:
        best = "  best" if evaluation.step == report.best_step else ""
        lines.append(
            f"  step {evaluation.step} (epoch {evaluation.epoch:g}): "
            f"held-out loss {evaluation.loss:.4f}{best}"
        )
    if report.stopped_early:
        lines.append("stopped early: the held-out loss stopped improving")
    if report.out_of_time:
        limit = float(report.config["time_limit"]) / 60
        lines.append(
            f"stopped at the time limit ({limit:g} min) after {_count(report.steps, 'step')}; "
            "the best checkpoint was kept"
        )
    phases = report.phases
    if phases:
        pace = f" ({_pace(report.steps, phases['steps'])})" if phases.get("steps") else ""
        lines.append(
            f"seconds: prepare {phases.get('prepare', 0):.1f}, "
            f"steps {phases.get('steps', 0):.1f}{pace}, "
            f"evaluate {phases.get('evaluate', 0):.1f}, save {phases.get('save', 0):.1f}"
        )
    lines.append(f"model saved to {report.output}")
    return "\n".join(lines)


def train_command(args: argparse.Namespace) -> int:
    from generation.models import DEFAULT_MODEL, resolve_device

    if args.report_originals < 1:
        raise ValueError("--report-originals must be at least 1")
    if args.time_limit is not None and not args.time_limit > 0:
        raise ValueError("--time-limit must be more than 0 minutes")
    if args.eval_batch_size < 1:
        raise ValueError("--eval-batch-size must be at least 1")
    if not args.checkpoint_every >= 0:
        raise ValueError("--checkpoint-every must be 0 minutes or more")
    # Where the model goes and what is read, checked before hours of training.
    check_model_output("--output", args.output)
    check_pairs_files(args.pairs)
    # A device this machine lacks, or bf16 asked of a GPU without it, stops here, not after
    # the data was read and the prompts made.
    resolve_precision(resolve_device(args.device), args.precision)
    # 1. The pairs, and the report's data checked before hours of training.
    by_source = read_training_pairs(args)
    report_folder = report_data(args)
    pairs = [pair for source in by_source.values() for pair in source]
    if args.max_pairs is not None:
        random.Random(args.seed).shuffle(pairs)
        pairs = pairs[: args.max_pairs]
    # 2. Training, with early stopping on the held-out pairs.
    config = TrainingConfig(
        base_model=args.base_model or DEFAULT_MODEL,
        output=Path(args.output),
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        eval_fraction=args.eval_fraction,
        eval_every=args.eval_every,
        patience=args.patience,
        min_delta=args.min_delta,
        device=args.device,
        seed=args.seed,
        add_special_tokens=args.add_special_tokens,
        time_limit=args.time_limit * 60 if args.time_limit else None,
        eval_batch_size=args.eval_batch_size,
        checkpoint_every=args.checkpoint_every * 60,
        precision=args.precision,
        group_by_length=not args.no_group_by_length,
    )
    sources = {name: len(found) for name, found in by_source.items()}
    report = train(config, pairs, show_progress=not args.quiet, sources=sources)
    print(training_summary(report))
    # 3. The quality table of the saved model.
    if report_folder is not None:
        print()
        print(
            quality_table(
                config.output,
                report_folder,
                originals=args.report_originals,
                codes=args.report_code,
                device=args.device,
                seed=args.seed,
            )
        )
    return 0


def add_train_parser(commands) -> None:
    parser = commands.add_parser(
        "train",
        help="Fine-tune a causal LM into the Polyjuice format on paired data.",
        description=__doc__,
    )
    data = parser.add_argument_group("data")
    data.add_argument(
        "--data",
        default=str(DEFAULT_DATA),
        help="Folder searched for CAD sentiment and NLI pair files (default ../shared/data).",
    )
    data.add_argument(
        "--splits", default="train", help="Comma-separated splits to train on (train)."
    )
    data.add_argument(
        "--pairs",
        action="append",
        help="Train on this file instead (JSONL x/x_hat, TSV or CAD sentiment); repeatable.",
    )
    data.add_argument("--format", default="auto", choices=["auto", "jsonl", "tsv", "cad-sentiment"])
    data.add_argument("--x-column", default="x")
    data.add_argument("--x-hat-column", default="x_hat")
    data.add_argument(
        "--max-pairs",
        type=whole_number_at_least(1),
        default=None,
        help="A random sample this large (default: every pair).",
    )
    model = parser.add_argument_group("model and optimisation")
    model.add_argument("--base-model", default=None, help="Hub id, local dir, or the default.")
    model.add_argument(
        "--output",
        required=True,
        help="Directory to write the model to: a new or empty one, or an earlier model's "
        "(overwritten).",
    )
    model.add_argument("--epochs", type=whole_number_at_least(1), default=3)
    model.add_argument("--learning-rate", type=number_above(0), default=5e-5)
    model.add_argument("--batch-size", type=whole_number_at_least(1), default=16)
    model.add_argument("--max-length", type=whole_number_at_least(1), default=120)
    model.add_argument("--device", default="auto")
    model.add_argument(
        "--precision",
        default="auto",
        choices=PRECISIONS,
        help="What the forward passes compute in; weights stay fp32 (auto: bf16 on a GPU "
        "or CPU with bf16 arithmetic, else fp32).",
    )
    model.add_argument(
        "--no-group-by-length",
        action="store_true",
        help="Batch prompts in random order (default: batches of prompts of similar length, "
        "far less padding).",
    )
    model.add_argument("--seed", type=int, default=0)
    model.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="Learn the markers as new tokens (needs a long run; default: text).",
    )
    stopping = parser.add_argument_group("held-out split and early stopping")
    stopping.add_argument(
        "--eval-fraction",
        type=share(zero=True, one=False),
        default=0.05,
        help="Share of pairs held out (0.05).",
    )
    stopping.add_argument(
        "--eval-every",
        type=whole_number_at_least(0),
        default=0,
        help="Steps between evaluations (0: each epoch).",
    )
    stopping.add_argument(
        "--patience",
        type=whole_number_at_least(1),
        default=2,
        help="Evaluations without improvement (2).",
    )
    stopping.add_argument("--min-delta", type=number_at_least(0), default=0.0)
    stopping.add_argument(
        "--eval-batch-size",
        type=int,
        default=64,
        help="Held-out prompts per forward pass (64; no gradients, so more than --batch-size).",
    )
    stopping.add_argument(
        "--checkpoint-every",
        type=float,
        default=5.0,
        metavar="MINUTES",
        help="Write a better checkpoint at most this often (5; 0: at each improvement); "
        "the best one is held in memory in between and always written at the end.",
    )
    stopping.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="MINUTES",
        help="Stop training this many minutes after the pairs were read (prompts and "
        "model loading count), keeping the best checkpoint; the quality table follows.",
    )
    report = parser.add_argument_group("quality report")
    report.add_argument("--no-report", action="store_true", help="Skip the quality table.")
    report.add_argument("--report-originals", type=int, default=40, help="Held-out originals.")
    report.add_argument(
        "--report-code", action="append", choices=CONTROL_CODES, help="Repeat for several."
    )
    report.add_argument(
        "--report-data", default=None, help="CAD folder of the report (found under --data)."
    )
    parser.add_argument("--quiet", action="store_true", help="No progress bar.")
    parser.set_defaults(handler=train_command)
