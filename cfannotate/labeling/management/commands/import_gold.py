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
        except CfannotateError as error:
            details = "; ".join(
                f"{where}: {', '.join(messages)}" for where, messages in error.fields.items()
            )
            raise CommandError(error.message + (f" {details}" if details else "")) from None
        imported = counted(count, "round")
        self.stdout.write(self.style.SUCCESS(f"Imported {imported} into {found.name}."))
