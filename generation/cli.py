"""Command line: `python -m generation perturb ...`, `train ...` and `evaluate ...`.

perturb prints one JSON object per candidate on stdout; progress and errors go to
stderr, errors as one line with exit status 2.
"""

import argparse
import json
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

from generation.cli_arguments import (
    check_writable_file,
    number_above,
    number_at_least,
    share,
    whole_number_at_least,
)
from generation.engines import ENGINE_NAMES, SERVER_APIS
from generation.generators import generator_names
from generation.precision import add_dtype_argument
from generation.text_files import read_utf8_lines
from generation.tokens import CONTROL_CODES

EXIT_USAGE = 2
EXIT_SERVER = 1  # an inference server could not be reached or refused a request


def _read_texts(args: argparse.Namespace) -> list[str]:
    texts: list[str] = list(args.texts)
    if args.file:
        texts += _read_text_file(args.file)
    if not texts or texts == ["-"]:
        texts = [] if texts == ["-"] else texts
        if not sys.stdin.isatty():
            texts += sys.stdin.read().splitlines()
    return [text.strip() for text in texts if text.strip() and text.strip() != "-"]


def _read_text_file(name: str) -> list[str]:
    """The lines of the --file text file, refused in one line naming it when it is missing,
    a directory, or not UTF-8."""
    path = Path(name)
    if not path.exists():
        raise FileNotFoundError(f"--file {name}: no such file")
    if not path.is_file():
        raise ValueError(f"--file {name}: a directory, not a text file")
    return read_utf8_lines(path)


def _candidate_json(candidate, original_text: str) -> dict:
    fluency = candidate.fluency
    return {
        "original": original_text,
        "text": candidate.record.text,
        "generator": candidate.record.generator,
        "code_requested": candidate.record.control_code,
        "code": candidate.code,
        "blanked": candidate.record.prompt,
        "edit": candidate.edit,
        "fluency": None if fluency is None else {"full": fluency.full, "changed": fluency.changed},
        "kept": candidate.kept,
        "dropped_by": candidate.dropped_by,
    }


def perturb_command(args: argparse.Namespace) -> int:
    from generation.decoding import DecodingConfig
    from generation.pipeline import PipelineSettings, perturb_texts
    from generation.polyjuice import DEFAULT_CODES, PolyjuiceSettings

    _check_generator_options(args)
    _check_beams(args)
    texts = _read_texts(args)
    if not texts:
        print("perturb: give texts as arguments, with --file, or on stdin.", file=sys.stderr)
        return EXIT_USAGE
    if args.quiet:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    if args.generator != "polyjuice":
        return _other_generator(args, texts)
    try:
        server = _server_config(args)
    except ValueError as error:
        print(f"perturb: {error}", file=sys.stderr)
        return EXIT_USAGE
    decoding = DecodingConfig(
        do_sample=args.beams == 1,
        num_beams=args.beams,
        per_prompt=args.n,
        temperature=args.temperature,
        top_p=args.top_p,
        batch_size=args.batch_size,
        seed=args.seed,
    )
    settings = PipelineSettings(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        fluency_threshold=None if args.no_filter else args.threshold,
        sanity=not args.no_sanity,
        polyjuice=PolyjuiceSettings(
            codes=tuple(args.code) if args.code else DEFAULT_CODES,
            strategy=args.strategy,
            decoding=decoding,
            seed=args.seed,
            sentence_blank=not args.blank,
            random_blank_sets=args.blank_sets,
            engine=args.engine,
            server=server,
        ),
    )
    result = perturb_texts(
        texts, settings, blanked=tuple(args.blank or ()), show_progress=not args.quiet
    )
    _print_result(args, result)
    return 0


# Options that only the polyjuice path reads, and the generators that read the others.
POLYJUICE_ONLY = {"code": "--code", "blank": "--blank"}
OTHER_GENERATORS_ONLY = {"option": "--option", "label": "--label"}


def _check_generator_options(args: argparse.Namespace) -> None:
    """Refuse options the chosen generator would ignore, before anything loads.

    Polyjuice takes its settings as options of their own (--n, --beams, ...) and perturbs
    the texts without a label; the other generators read --option and --label, and know
    neither control codes nor blanks.
    """
    if args.generator == "polyjuice":
        ignored, readers = OTHER_GENERATORS_ONLY, "the other generators read it"
    else:
        ignored, readers = POLYJUICE_ONLY, "polyjuice reads it"
    for name, option in ignored.items():
        if getattr(args, name) is not None:
            raise ValueError(f"--generator {args.generator} takes no {option}; only {readers}.")


def _check_beams(args: argparse.Namespace) -> None:
    """Beam search returns at most one candidate per beam for each prompt."""
    if args.beams > 1 and args.n > args.beams:
        raise ValueError(
            f"--n {args.n} asks for more candidates than --beams {args.beams} can return; "
            "give --n at most --beams, or --beams 1 to sample."
        )


def _server_config(args: argparse.Namespace):
    """The inference server the command line names, for --engine server (else None)."""
    from generation.engines import ServerConfig

    if args.engine != "server":
        if args.server_url:
            raise ValueError("--server-url needs --engine server.")
        return None
    if not args.server_url or not args.server_model:
        raise ValueError("--engine server needs --server-url and --server-model.")
    return ServerConfig(
        base_url=args.server_url,
        model=args.server_model,
        api=args.server_api,
        api_key_env=args.server_api_key_env or "",
        concurrency=args.server_concurrency,
        timeout=args.server_timeout,
        retries=args.server_retries,
    )


def _options(pairs: list[str]) -> dict:
    """--option key=value pairs; values are JSON where they parse (numbers, lists, true)."""
    options = {}
    for pair in pairs or ():
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise ValueError(f"--option takes key=value, not {pair!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _other_generator(args: argparse.Namespace, texts: list[str]) -> int:
    from generation.generators import GeneratorOptionsError, UnknownGenerator, load_generator
    from generation.pipeline import PipelineSettings, run_generator
    from generation.records import OriginalRecord

    try:
        options = _options(args.option)
        if args.model:
            options.setdefault("model", args.model)
        generator = load_generator(args.generator, options)
    except (GeneratorOptionsError, UnknownGenerator, ValueError) as error:
        print(f"perturb: {error}", file=sys.stderr)
        return EXIT_USAGE
    originals = [
        OriginalRecord(key=f"x{index}", text=text, label=args.label or "")
        for index, text in enumerate(texts, start=1)
    ]
    settings = PipelineSettings(
        device=args.device,
        dtype=args.dtype,
        fluency_threshold=None if args.no_filter else args.threshold,
        sanity=not args.no_sanity,
    )
    result, skipped = run_generator(generator, originals, settings, show_progress=not args.quiet)
    _print_result(args, result)
    for entry in skipped:
        print(f"skipped {entry.original_key}: {entry.reason}", file=sys.stderr)
    if skipped and len(skipped) == len(originals) and not result.candidates:
        print(f"perturb: {_all_skipped_hint(args, skipped)}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _all_skipped_hint(args: argparse.Namespace, skipped: list) -> str:
    """What to change on the command line when the generator skipped every original."""
    if not any(entry.not_for_label for entry in skipped):
        return f"{args.generator} skipped every original (the reasons are above)."
    if args.label is None:
        return (
            f"{args.generator} needs the originals' label: pass it with --label, "
            "e.g. --label positive (the reasons above name the labels it converts)."
        )
    return (
        f"{args.generator} does not convert the label {args.label!r}: pass one it converts "
        "with --label (named above), or name yours with --option."
    )


def _print_result(args: argparse.Namespace, result) -> None:
    originals = {original.key: original.text for original in result.originals}
    for candidate in result.candidates:
        if args.kept_only and not candidate.kept:
            continue
        print(
            json.dumps(
                _candidate_json(candidate, originals[candidate.record.original_key]),
                ensure_ascii=False,
            )
        )
    stats = result.stats
    if not args.quiet:
        print(
            f"{len(result.originals)} original(s): {stats.received} parsed candidates, "
            f"{stats.duplicates} duplicates, {stats.copies} copies of x, "
            f"{result.malformed} malformed answers, "
            f"{stats.sanity_dropped} dropped by sanity filters, "
            f"{stats.fluency_dropped} dropped by fluency, {stats.kept} kept.",
            file=sys.stderr,
        )


def _add_perturb_parser(commands) -> None:
    parser = commands.add_parser(
        "perturb",
        help="Generate counterfactuals of sentences; one JSON line per candidate.",
    )
    parser.add_argument("texts", nargs="*", help="Sentences to perturb (or use --file / stdin).")
    parser.add_argument("--file", help="A text file with one sentence per line.")
    parser.add_argument(
        "--generator",
        default="polyjuice",
        choices=generator_names(),
        help="Which generator (default polyjuice); see generation/generators/.",
    )
    parser.add_argument(
        "--label",
        default=None,
        help="The originals' label, for the generators that need one (not polyjuice).",
    )
    parser.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="A setting of a generator other than polyjuice (repeatable), "
        "e.g. --option variants='[\"regular\"]'.",
    )
    parser.add_argument(
        "--code",
        action="append",
        choices=CONTROL_CODES,
        help="Control code; repeat for several (default: Polyjuice's five).",
    )
    parser.add_argument(
        "--blank",
        action="append",
        help='Blanked sentence, e.g. "It is [BLANK] for kids." (repeatable).',
    )
    parser.add_argument(
        "--n", type=whole_number_at_least(1), default=3, help="Candidates per prompt (default 3)."
    )
    parser.add_argument(
        "--blank-sets",
        type=whole_number_at_least(0),
        default=3,
        help="Random blank sets per sentence besides the whole sentence.",
    )
    parser.add_argument(
        "--model", default=None, help="Model: hub id, local directory, or the packaged default."
    )
    parser.add_argument("--strategy", default="auto", choices=["auto", "native", "fewshot"])
    parser.add_argument("--device", default="auto")
    add_dtype_argument(parser)
    _add_engine_arguments(parser)
    _add_decoding_arguments(parser)
    parser.set_defaults(handler=perturb_command)


def _add_engine_arguments(parser) -> None:
    """--engine, and the inference server's options."""
    parser.add_argument(
        "--engine",
        default="auto",
        choices=ENGINE_NAMES,
        help="Decoding engine: auto (continuous batching on CUDA, our loop on CPU), loop, "
        "continuous, or server (an OpenAI-compatible inference server).",
    )
    server = parser.add_argument_group("inference server (with --engine server)")
    server.add_argument("--server-url", help="Base URL, e.g. http://gpu-box:8000/v1.")
    server.add_argument("--server-model", help="The model name the server serves.")
    server.add_argument("--server-api", default="auto", choices=SERVER_APIS)
    server.add_argument(
        "--server-api-key-env",
        help="Name of the environment variable that holds the API key (the key is never "
        "passed on the command line).",
    )
    server.add_argument("--server-concurrency", type=whole_number_at_least(1), default=16)
    server.add_argument("--server-timeout", type=number_above(0), default=60.0)
    server.add_argument("--server-retries", type=whole_number_at_least(0), default=3)


def _add_decoding_arguments(parser) -> None:
    """Sampling, the filters, and what is printed."""
    parser.add_argument(
        "--beams",
        type=whole_number_at_least(1),
        default=1,
        help="Beam search width (1: sampling).",
    )
    parser.add_argument("--temperature", type=number_above(0), default=1.0)
    parser.add_argument("--top-p", type=share(zero=False, one=True), default=0.9)
    parser.add_argument("--batch-size", type=whole_number_at_least(1), default=32)
    parser.add_argument(
        "--threshold",
        type=number_at_least(0),
        default=10.0,
        help="Fluency filter threshold in log-probability points (default 10).",
    )
    parser.add_argument("--no-filter", action="store_true", help="Skip the fluency filter.")
    parser.add_argument(
        "--no-sanity",
        action="store_true",
        help="Keep candidates the sanity filters would drop (cut off, run-on, repeated, "
        "non-words, fragments, edits outside the blanks).",
    )
    parser.add_argument("--kept-only", action="store_true", help="Print only kept candidates.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="No progress bar or summary.")


def evaluate_command(args: argparse.Namespace) -> int:
    """The quality report (generation.quality_report) on held-out CAD originals."""
    from generation.cad_sentiment import CAD_LABELS, SENTIMENT_FOLDER
    from generation.decoding import DecodingConfig
    from generation.pipeline import PipelineSettings
    from generation.polyjuice import PolyjuiceSettings
    from generation.quality_report import evaluate, format_table

    if args.json:
        check_writable_file("--json", args.json)  # before minutes of evaluation
    data = Path(args.data)
    if not (data / SENTIMENT_FOLDER).is_dir():
        print(f"evaluate: no CAD sentiment data in {data} (--data)", file=sys.stderr)
        return EXIT_USAGE
    if args.originals < 1:
        print("evaluate: --originals must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.in_loop_pairs < 0:
        print("evaluate: --in-loop-pairs must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    server = _server_config(args)  # a ValueError is one line from main()
    if args.quiet:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    settings = PipelineSettings(
        model=args.model,
        device=args.device,
        polyjuice=PolyjuiceSettings(
            codes=tuple(args.code) if args.code else PolyjuiceSettings().codes,
            random_blank_sets=args.blank_sets,
            engine=args.engine,
            server=server,
            seed=args.seed,
            decoding=DecodingConfig(seed=args.seed, temperature=args.temperature, top_p=args.top_p),
            label_choices=() if args.no_label_directed else CAD_LABELS,
        ),
    )
    report = evaluate(
        settings,
        data=data,
        originals=args.originals,
        seed=args.seed,
        show_progress=not args.quiet,
        flip_weight=args.flip_weight,
        in_loop_pairs=args.in_loop_pairs,
    )
    print(format_table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    return 0


def _add_evaluate_parser(commands) -> None:
    from generation.cad_sentiment import DEFAULT_CAD

    parser = commands.add_parser(
        "evaluate",
        help="Quality report of the generator on held-out CAD sentiment originals.",
    )
    parser.add_argument(
        "--model", default=None, help="Generator: hub id, local directory, or the packaged default."
    )
    parser.add_argument("--originals", type=int, default=40, help="Held-out originals (40).")
    parser.add_argument(
        "--no-label-directed",
        action="store_true",
        help="Label-agnostic prompts (without generation.label_directed).",
    )
    parser.add_argument(
        "--flip-weight",
        type=number_at_least(0),
        default=0.5,
        help="λ of selection's flip term (selection.md §2; default 0.5); 0: diversity alone.",
    )
    parser.add_argument(
        "--in-loop-pairs",
        type=int,
        default=0,
        help="Labeled counterfactuals (human revisions of other dev reviews) the classifier "
        "in the loop learns from, as a campaign's does from its gold and crowd labels (0).",
    )
    parser.add_argument(
        "--data", default=str(DEFAULT_CAD), help="The CAD folder (default ../shared/data/cad)."
    )
    parser.add_argument(
        "--code",
        action="append",
        choices=CONTROL_CODES,
        help="Control code; repeat for several (default: Polyjuice's five).",
    )
    parser.add_argument(
        "--blank-sets",
        type=whole_number_at_least(0),
        default=1,
        help="Random blank sets besides the sentence (1).",
    )
    parser.add_argument("--device", default="auto")
    _add_engine_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    _add_sampling_arguments(parser)
    parser.add_argument("--json", help="Also write every figure to this file.")
    parser.add_argument("--quiet", action="store_true", help="No progress bar.")
    parser.set_defaults(handler=evaluate_command)


def _add_sampling_arguments(parser) -> None:
    """Sampling as the generator settings give it (`temperature`, `top_p`): higher spreads
    candidates further apart and lets fewer pass the fluency filter."""
    from generation.decoding import DecodingConfig

    defaults = DecodingConfig()
    parser.add_argument(
        "--temperature",
        type=number_above(0),
        default=defaults.temperature,
        help=f"Sampling temperature (default {defaults.temperature:g}).",
    )
    parser.add_argument(
        "--top-p",
        type=share(zero=False, one=True),
        default=defaults.top_p,
        help=f"Nucleus sampling mass (default {defaults.top_p:g}).",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m generation", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_perturb_parser(commands)
    from generation.training_cli import add_train_parser

    add_train_parser(commands)
    _add_evaluate_parser(commands)
    return parser


def _one_line(error: Exception) -> str:
    """The error as a person reads it: an OSError as its file and what went wrong
    ("pairs: Is a directory"), not Python's "[Errno 21] ..."."""
    if isinstance(error, OSError) and error.strerror and error.filename:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def main(argv: Iterable[str] | None = None) -> int:
    from generation.engines.server import InferenceServerError
    from generation.models import ModelUnavailable
    from generation.parsing import ParserMissing

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return args.handler(args)
    except (ModelUnavailable, ParserMissing, ValueError, OSError) as error:
        print(f"{args.command}: {_one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except InferenceServerError as error:
        print(f"{args.command}: {error}", file=sys.stderr)
        return EXIT_SERVER
