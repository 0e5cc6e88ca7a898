"""`manage.py import_candidates CAMPAIGN FILE`: the researcher's own candidates, all or none,
in the foreground with a progress bar (the page and the API import in the background)."""

import sys
from functools import partial
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.imports import candidates_import
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted


class Command(BaseCommand):
    help = (
        "Import candidate counterfactuals from a CSV (with a header) or JSONL file with the "
        "columns original_id (an original's id), text and, optionally, intended_label. "
        "Every bad row is reported; nothing is imported unless all rows are valid."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("file", type=Path, help="A .csv, .tsv or .jsonl file.")
        parser.add_argument(
            "--score-fluency",
            action="store_true",
            help="Score fluency with the campaign's LM and filter as generation does.",
        )

    def handle(self, *args, campaign: int, file: Path, score_fluency: bool, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        if not file.is_file():
            raise CommandError(f"No file at {file}.")
        from tqdm import tqdm

        try:
            with tqdm(desc="rows annotated", unit="row", file=sys.stderr) as bar:
                summary = candidates_import(
                    campaign=found,
                    file_name=file.name,
                    content=file.read_bytes(),
                    score_fluency=score_fluency,
                    queue_selection=False,
                    workers=None,  # the annotation pool's processes, on a long file
                    progress=partial(_bar_advance, bar),
                )
        except CfannotateError as error:
            details = "; ".join(
                f"{where}: {' '.join(messages)}" for where, messages in error.fields.items()
            )
            raise CommandError(error.message + (f" {details}" if details else "")) from None
        units = candidates_ready_send(found.pk, wait=True) or 0
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {counted(summary.imported, 'candidate')} for "
                f"{counted(summary.originals, 'original')} into {found.name} "
                f"({summary.kept} fluent); {counted(units, 'labeling unit')} selected."
            )
        )


def _bar_advance(bar, done: int, total: int) -> None:
    bar.total = total
    bar.update(done - bar.n)
