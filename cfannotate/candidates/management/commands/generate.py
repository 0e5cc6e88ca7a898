"""`manage.py generate CAMPAIGN`: the background pipeline in the foreground, with a progress bar."""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.models import GenerationRun, RunState
from cfannotate.candidates.runs import (
    DEFAULT_CHUNK_SIZE,
    generation_chunk_process,
    generation_run_cancel,
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
        from generation.models import resolve_device

        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1.")
        if chunk_size < 1:
            raise CommandError("--chunk-size must be at least 1.")
        try:
            resolve_device(device)  # a device this machine lacks stops here, before any run
        except ValueError as error:
            raise CommandError(str(error)) from None
        ids = _original_ids(found, limit=limit, not_generated=not_generated)
        try:
            run = generation_run_create(campaign=found, chunk_size=chunk_size, original_ids=ids)
        except CfannotateError as error:
            raise CommandError(error.message) from None
        self._generate(run, originals=len(ids), device=device)
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

    def _generate(self, run: GenerationRun, *, originals: int, device: str) -> None:
        """Process the run's chunks in order. Whatever stops it, Ctrl-C included, ends the
        run (its queued chunks dropped), so the campaign is never left with a run in progress
        that no worker will take; the error is then one line."""
        from tqdm import tqdm

        from generation.engines.server import InferenceServerError
        from generation.models import ModelUnavailable

        known = (CfannotateError, ModelUnavailable, InferenceServerError, ValueError)
        try:
            with (
                _tracebacks_left_out(known),
                tqdm(total=originals, desc="originals", unit="original", file=sys.stderr) as bar,
            ):
                for chunk in run.chunks.order_by("index"):
                    generation_chunk_process(chunk_id=chunk.pk, device=device)
                    bar.update(len(chunk.original_ids))
        except KeyboardInterrupt:
            ended = _run_end(run)
            raise CommandError(f"Interrupted: run {run.pk} {ended}.", returncode=130) from None
        except known as error:
            ended = _run_end(run)
            message = getattr(error, "message", str(error))
            raise CommandError(f"{message} (run {run.pk} {ended}.)") from None
        except Exception as error:
            # Logged with its traceback by the chunk that failed (candidates.runs).
            ended = _run_end(run)
            raise CommandError(
                f"Generation failed: {type(error).__name__}: {error} (run {run.pk} {ended}.)"
            ) from None


@contextmanager
def _tracebacks_left_out(known: tuple[type[BaseException], ...]) -> Iterator[None]:
    """A failed chunk is logged with its traceback, for a worker's log; here the command
    says a known failure in one line, so the log line leaves its traceback out (an
    unexpected error keeps it)."""

    def without_traceback(record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], known):
            record.exc_info, record.exc_text = None, None
        return True

    logger = logging.getLogger("cfannotate.candidates.runs")
    logger.addFilter(without_traceback)
    try:
        yield
    finally:
        logger.removeFilter(without_traceback)


def _original_ids(campaign: Campaign, *, limit: int | None, not_generated: bool) -> list[int]:
    if not campaign.originals.exists():
        raise CommandError(f"{campaign.name} has no originals to generate for: upload some first.")
    if not not_generated:
        return list(campaign.originals.order_by("id").values_list("id", flat=True)[:limit])
    ids = list(generation_overview(campaign).not_generated_ids)[:limit]
    if not ids:
        raise CommandError(
            f"Every original of {campaign.name} has been generated already; "
            "run without --not-generated to generate again for all of them."
        )
    return ids


def _run_end(run: GenerationRun) -> str:
    """Cancel the run unless its chunks ended it already; how it ended, in words."""
    run.refresh_from_db()
    if run.state in (RunState.QUEUED, RunState.RUNNING):
        run = generation_run_cancel(run=run)
    return run.get_state_display().lower()
