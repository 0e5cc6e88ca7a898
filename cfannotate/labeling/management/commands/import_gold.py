"""`manage.py import_gold CAMPAIGN FILE.jsonl`: gold and training rounds with known answers."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.datasets import read_jsonl
from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.labeling.gold import gold_rounds_import


class Command(BaseCommand):
    help = (
        "Import gold and training rounds: one JSON object per line, "
        '{"original_id", "kind": "gold"|"training", "items": [{"text", "valid", "label", '
        '"explanation"}]}. All rows or none.'
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("file", type=Path, help="A JSONL file.")

    def handle(self, *args, campaign: int, file: Path, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        if not file.is_file():
            raise CommandError(f"No file at {file}.")
        try:
            count = gold_rounds_import(campaign=found, records=read_jsonl(file))
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror or error}.") from None
        except CfannotateError as error:
            raise CommandError(_one_line(error)) from None
        imported = counted(count, "round")
        self.stdout.write(self.style.SUCCESS(f"Imported {imported} into {found.name}."))


def _one_line(error: CfannotateError) -> str:
    """The message, then the problems of each field it does not say already (a file's
    message names its first bad line, and its fields every bad line)."""
    details = "; ".join(
        f"{where}: {', '.join(messages)}"
        for where, messages in error.fields.items()
        if not _said(error.message, where, messages)
    )
    return error.message + (f" {details}" if details else "")


def _said(message: str, where: str, messages: list[str]) -> bool:
    return f"{where}: " in message and all(problem in message for problem in messages)
