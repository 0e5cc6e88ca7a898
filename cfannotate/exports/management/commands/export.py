"""`manage.py export CAMPAIGN KIND [--format jsonl|csv] [--include-gold] [--output PATH]`."""

import os
import stat
import tempfile
from collections.abc import Iterator

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.exports.files import DEFAULT_FORMAT, export_prepare
from cfannotate.exports.formats import FORMATS
from cfannotate.exports.selectors import EXPORT_KINDS, Row


def _campaign_from(reference: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=reference).first()
    if campaign is None and reference.isdigit():
        campaign = Campaign.objects.filter(pk=int(reference)).first()
    if campaign is None:
        raise CommandError(f"No campaign with id or slug {reference!r}.")
    return campaign


class Command(BaseCommand):
    help = (
        "Write a campaign's contrast set, augmentation set, raw judgments or list of all "
        "candidates as JSONL or CSV, to standard output or to a file."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign id or slug.")
        parser.add_argument("kind", help=f"One of: {', '.join(EXPORT_KINDS)}.")
        parser.add_argument(
            "--format", default=DEFAULT_FORMAT, help=f"One of: {', '.join(FORMATS)}."
        )
        parser.add_argument(
            "--include-gold", action="store_true", help="Judgments: add the gold rounds' ones."
        )
        parser.add_argument("--output", help="File to write; standard output when left out.")

    def handle(self, *args, campaign: str, kind: str, format: str, include_gold: bool, **options):
        try:
            export = export_prepare(
                campaign=_campaign_from(campaign),
                kind=kind,
                format=format,
                include_gold=include_gold,
            )
        except CfannotateError as error:
            raise CommandError(error.message) from None
        written = 0

        def tallied(rows: Iterator[Row]) -> Iterator[Row]:
            nonlocal written
            for row in rows:
                written += 1
                yield row

        chunks = export.chunks(tallied(export.rows()))
        output = options["output"]
        if output is None:
            self._to_stdout(chunks)
            return
        try:
            _write_whole(output, chunks)
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error.strerror or error}.") from None
        self.stderr.write(f"Wrote {counted(written, 'row')} to {output}.")

    def _to_stdout(self, chunks: Iterator[str]) -> None:
        try:
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            self.stdout.flush()
        except OSError as error:
            raise CommandError(
                f"Cannot write to standard output: {error.strerror or error}."
            ) from None


def _write_whole(output: str, chunks: Iterator[str]) -> None:
    """Write the export to `output` whole or not at all: into a temporary file beside it,
    moved into place once complete, so a full disk or an error midway leaves the old file
    as it was and nothing half-written. A device or a pipe (/dev/stdout) is written as it is."""
    if os.path.exists(output) and not os.path.isfile(output):
        with open(output, "w", encoding="utf-8", newline="") as file:
            file.writelines(chunks)
        return
    target = os.path.realpath(output)  # a link is followed, not replaced
    mode = _mode_for(target)
    handle, temporary = tempfile.mkstemp(
        dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".partial"
    )
    try:
        # newline="": the csv module writes its own line endings.
        with open(handle, "w", encoding="utf-8", newline="") as file:
            file.writelines(chunks)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def _mode_for(target: str) -> int:
    """The permissions the file keeps (an existing one's), or those a new file gets."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
