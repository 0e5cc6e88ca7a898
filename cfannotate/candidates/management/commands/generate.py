"""`manage.py generate CAMPAIGN`: the background pipeline in the foreground, with a progress bar."""

import sys

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.runs import (
    DEFAULT_CHUNK_SIZE,
    generation_chunk_process,
    generation_run_create,
)
from cfannotate.candidates.selectors import generation_overview
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted


class Command(BaseCommand):
    help = (
        "Generate candidate counterfactuals for a campaign in this process, chunk by "
        "chunk, exactly as background workers do."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument(
            "--limit", type=int, default=None, help="Only the first N originals (by id)."
        )
        parser.add_argument(
            "--not-generated",
            action="store_true",
            help="Only the originals never generated and without candidates (the rest of a "
            "campaign generated for a few first, as the demo's are).",
        )
        parser.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE)
        parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N.")

    def handle(
        self,
        *args,
        campaign: int,
        limit: int | None,
        not_generated: bool,
        chunk_size: int,
        device: str,
        **options,
    ):
        from tqdm import tqdm

        from generation.models import ModelUnavailable, resolve_device

        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1.")
        try:
            resolve_device(device)  # a device this machine lacks stops here, before any run
        except ValueError as error:
            raise CommandError(str(error)) from None
        if not_generated:
            ids = list(generation_overview(found).not_generated_ids)[:limit]
            if not ids:
                raise CommandError(
                    f"Every original of {found.name} has been generated already; "
                    "run without --not-generated to generate again for all of them."
                )
        else:
            ids = list(found.originals.order_by("id").values_list("id", flat=True)[:limit])
        try:
            run = generation_run_create(campaign=found, chunk_size=chunk_size, original_ids=ids)
            chunks = list(run.chunks.order_by("index"))
            with tqdm(total=len(ids), desc="originals", unit="original", file=sys.stderr) as bar:
                for chunk in chunks:
                    generation_chunk_process(chunk_id=chunk.pk, device=device)
                    bar.update(len(chunk.original_ids))
        except (CfannotateError, ModelUnavailable, ValueError) as error:
            raise CommandError(getattr(error, "message", str(error))) from None
        run.refresh_from_db()
        units = candidates_ready_send(found.pk, wait=True) or 0
        self.stdout.write(
            self.style.SUCCESS(
                f"{found.name}: run {run.pk} {run.get_state_display().lower()}: "
                f"{counted(run.candidates_stored, 'new candidate')} from "
                f"{counted(len(ids), 'original')} in {counted(run.chunks_done, 'chunk')}; "
                f"{counted(units, 'labeling unit')} selected."
            )
        )
