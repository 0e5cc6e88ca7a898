"""One export file of a campaign: the checked request, its name, and its text as a stream.

The page, the API, the admin action and `manage.py export` all go through
`export_prepare`, so they accept the same kinds and formats and name files alike.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from django.http import StreamingHttpResponse

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import InvalidInput
from cfannotate.exports.formats import ENCODERS, FORMATS
from cfannotate.exports.selectors import EXPORT_KINDS, ExportKind, Row

DEFAULT_FORMAT = "jsonl"


@dataclass(frozen=True)
class ExportFile:
    campaign: Campaign
    kind: ExportKind
    format: str
    include_gold: bool = False

    @property
    def filename(self) -> str:
        suffix = "-with-gold" if self.include_gold else ""
        return f"{self.campaign.slug}-{self.kind.name}{suffix}.{self.format}"

    @property
    def content_type(self) -> str:
        return FORMATS[self.format]

    def rows(self) -> Iterator[Row]:
        if self.kind.takes_gold:
            return self.kind.rows(self.campaign, include_gold=self.include_gold)
        return self.kind.rows(self.campaign)

    def chunks(self, rows: Iterator[Row] | None = None) -> Iterator[str]:
        """The file's text in pieces; pass `rows` to watch them go by (e.g. to count)."""
        return ENCODERS[self.format](self.rows() if rows is None else rows, self.kind.columns)


def export_prepare(
    *, campaign: Campaign, kind: str, format: str | None = None, include_gold: bool = False
) -> ExportFile:
    """Check what was asked for; InvalidInput names the choices when it is not one of them."""
    export_kind = EXPORT_KINDS.get(kind)
    if export_kind is None:
        raise InvalidInput(
            f"Unknown export {kind!r}; choose one of: {', '.join(EXPORT_KINDS)}.",
            fields={"kind": [f"Choose one of: {', '.join(EXPORT_KINDS)}."]},
        )
    format = format or DEFAULT_FORMAT
    if format not in FORMATS:
        raise InvalidInput(
            f"Unknown format {format!r}; choose one of: {', '.join(FORMATS)}.",
            fields={"format": [f"Choose one of: {', '.join(FORMATS)}."]},
        )
    if include_gold and not export_kind.takes_gold:
        raise InvalidInput(
            f"Gold rounds can only be added to the judgments export, not to {kind!r}.",
            fields={"include_gold": ["Only the judgments export has gold rounds."]},
        )
    return ExportFile(campaign=campaign, kind=export_kind, format=format, include_gold=include_gold)


def export_response(export: ExportFile) -> StreamingHttpResponse:
    """The file as a download, generated while it is sent."""
    response = StreamingHttpResponse(export.chunks(), content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    # A proxy that buffers would hold the whole file in memory; ask it not to.
    response["X-Accel-Buffering"] = "no"
    return response
