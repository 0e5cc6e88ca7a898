"""`manage.py evaluate CAMPAIGN [--kind table2|table3] [--predictions F] [--train F] [--json]`."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.evaluation import services
from cfannotate.evaluation.models import Evaluation, EvaluationKind
from cfannotate.evaluation.uploads import jsonl_records


def _campaign_from(reference: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=reference).first()
    if campaign is None and reference.isdigit():
        campaign = Campaign.objects.filter(pk=int(reference)).first()
    if campaign is None:
        raise CommandError(f"No campaign with id or slug {reference!r}.")
    return campaign


def _read_jsonl(path: str, what: str) -> list[dict]:
    """The rows of a JSONL file, read as an uploaded one is; any problem is one line."""
    try:
        content = Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"Cannot read the {what} file {path}: {error.strerror}.") from None
    try:
        # A local file has no upload limit: a training set may be larger than one.
        return jsonl_records(file_name=path, content=content, field=what, max_bytes=len(content))
    except CfannotateError as error:
        raise CommandError(f"{error.message} ({path})") from None


def _percent(share: float) -> str:
    return f"{share * 100:5.1f}"


def _ci(figure: dict) -> str:
    return f"[{figure['low'] * 100:.1f}, {figure['high'] * 100:.1f}]"


def table2_lines(evaluation: Evaluation) -> list[str]:
    r = evaluation.result
    lines = [
        f"Table 2, contrast set: {evaluation.get_source_display()} "
        f"({json.dumps(evaluation.parameters, sort_keys=True)})",
        f"{'':15} {'accuracy %':>10}  {'95% CI':>14}  count",
    ]
    rows = [
        ("All originals", r["all_originals_accuracy"]),
        ("Orig. set", r["original_accuracy"]),
        ("Contrast set", r["contrast_accuracy"]),
        ("Consistency", r["consistency"]),
    ]
    for name, figure in rows:
        if figure is None:
            continue
        lines.append(
            f"{name:15} {_percent(figure['value']):>10}  {_ci(figure):>14}  "
            f"{figure['correct']}/{figure['total']}"
        )
    drop = r["drop"]
    lines.append(f"{'Drop':15} {drop['value'] * 100:>+10.1f}  {_ci(drop):>14}")
    if r.get("training_overlap"):
        lines.append(f"Warning: {r['training_overlap']} originals are also in the training set.")
    return lines


def table3_lines(evaluation: Evaluation) -> list[str]:
    r = evaluation.result
    lines = [
        f"Table 3, augmentation: {counted(len(r['splits']), 'split')}, seeds {r['seeds']}, "
        f"{r['test_fraction']:.0%} held out",
        f"{'n':>6} {'m':>6} {'model':6} {'held-out orig.':>15} {'contrast set':>15}",
    ]
    for model in ("comp", "aug"):
        original, contrast = r[f"{model}_original_accuracy"], r[f"{model}_contrast_accuracy"]
        lines.append(
            f"{r['n']:>6} {r['m']:>6} {model:6} "
            f"{_percent(original['mean'])} ± {original['std'] * 100:4.1f}   "
            f"{_percent(contrast['mean'])} ± {contrast['std'] * 100:4.1f}"
        )
    return lines


# The options of one table only (Table 2 also takes --predictions and --train).
TABLE2_ONLY = {"folds": "--folds", "bootstrap": "--bootstrap"}
TABLE3_ONLY = {"n": "--n", "m": "--m", "test_fraction": "--test-fraction", "seeds": "--seeds"}


def _refuse_options_of_the_other_table(kind: str, options: dict) -> None:
    """CommandError naming an option given for the table not asked for, or --folds beside
    the predictions or training set that leave no baseline to cross-fit."""
    if kind == EvaluationKind.TABLE3:
        if options["predictions"] or options["train"]:
            raise CommandError(
                "--predictions and --train are for Table 2; Table 3 trains the baseline "
                "on the campaign's own data."
            )
        for name, option in TABLE2_ONLY.items():
            if options[name] is not None:
                raise CommandError(f"{option} is for Table 2; it does not go with --kind table3.")
        return
    for name, option in TABLE3_ONLY.items():
        if options[name] is not None:
            raise CommandError(
                f"{option} is for Table 3 (--kind table3); it does not go with --kind table2, "
                "the default."
            )
    if options["folds"] is not None:
        for name in ("predictions", "train"):
            if options[name]:
                raise CommandError(
                    f"--folds does not go with --{name}: folds are for the baseline "
                    "cross-fitted on the campaign's originals, when neither file is given."
                )


class Command(BaseCommand):
    help = (
        "Evaluate a model on a campaign's kept counterfactuals: Table 2 (contrast set: accuracy, "
        "drop, consistency) or Table 3 (comp against aug). Stores the run and prints the table."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign id or slug.")
        parser.add_argument("--kind", choices=EvaluationKind.values, default=EvaluationKind.TABLE2)
        parser.add_argument(
            "--predictions",
            help="Table 2: JSONL of {id, label} (originals) and {candidate_id, label} rows.",
        )
        parser.add_argument(
            "--train", help="Table 2: JSONL of {text, context?, label} to train the baseline on."
        )
        parser.add_argument(
            "--folds",
            type=int,
            help=f"Table 2, cross-fitted baseline: folds (default {services.DEFAULT_FOLDS}).",
        )
        parser.add_argument(
            "--bootstrap",
            type=int,
            help=f"Table 2: bootstrap resamples (default {services.DEFAULT_BOOTSTRAP}).",
        )
        parser.add_argument("--n", type=int, help="Table 3: originals in both training sets.")
        parser.add_argument("--m", type=int, help="Table 3: counterfactuals (or originals) added.")
        parser.add_argument(
            "--test-fraction",
            type=float,
            help=f"Table 3: share held out (default {services.DEFAULT_TEST_FRACTION}).",
        )
        parser.add_argument(
            "--seeds",
            type=int,
            nargs="+",
            metavar="SEED",
            help=f"Table 3 (default {' '.join(map(str, services.DEFAULT_SEEDS))}).",
        )
        parser.add_argument("--json", action="store_true", help="Print the stored run as JSON.")

    def handle(self, *args, campaign: str, kind: str, **options):
        _refuse_options_of_the_other_table(kind, options)
        target = _campaign_from(campaign)
        arguments = {}
        if kind == EvaluationKind.TABLE2:
            if options["predictions"]:
                arguments["predictions"] = _read_jsonl(options["predictions"], "predictions")
            if options["train"]:
                arguments["training_records"] = _read_jsonl(options["train"], "training")
            names = ("folds", "bootstrap")
        else:
            names = ("n", "m", "test_fraction", "seeds")
        # What is left out takes the service's default.
        arguments.update({name: options[name] for name in names if options[name] is not None})
        try:
            evaluation = services.evaluation_run(campaign=target, kind=kind, **arguments)
        except CfannotateError as error:
            details = "; ".join(
                message for messages in error.fields.values() for message in messages
            )
            extra = f" ({details})" if details and details not in error.message else ""
            raise CommandError(error.message + extra) from None
        if options["json"]:
            payload = {
                "id": evaluation.id,
                "kind": evaluation.kind,
                "source": evaluation.source,
                "parameters": evaluation.parameters,
                "result": evaluation.result,
            }
            self.stdout.write(json.dumps(payload, indent=2, sort_keys=True))
            return
        lines = (
            table2_lines(evaluation) if kind == EvaluationKind.TABLE2 else table3_lines(evaluation)
        )
        self.stdout.write("\n".join(lines))
        self.stderr.write(f"Stored as evaluation {evaluation.id}.")
