"""REST API of dataset uploads: a CSV/TSV/JSONL file of originals, previewed or imported."""

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.campaigns.uploads import originals_upload, upload_preview
from cfannotate.core import tabular
from cfannotate.core.api_input import BodySerializer
from cfannotate.core.json_input import BoundedJSONField
from cfannotate.core.upload_handlers import LimitedUploadMixin, OneFileField


class LabelSpellingSerializer(serializers.Serializer):
    spelling = serializers.CharField()
    rows = serializers.IntegerField()
    label = serializers.CharField(
        source="label.value", allow_null=True, help_text="null: not a campaign label."
    )


class OriginalUploadApi(LimitedUploadMixin, APIView):
    """Upload the campaign's originals as a file: every row or none.

    The columns are mapped to `id`, `text`, `context` (pair tasks) and `label`;
    fields left out of `mapping` are guessed from the header. `dry_run=true` answers
    with the preview, the mapping and every row's problems, and imports nothing.
    """

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="OriginalUploadInput")
    class InputSerializer(BodySerializer):
        file = OneFileField(
            help_text="CSV or TSV with a header, or JSONL (one object per line); UTF-8, or "
            "UTF-16 with a byte order mark."
        )
        mapping = BoundedJSONField(
            required=False,
            binary=True,
            help_text='JSON object: field -> column, e.g. {"text": "review", "label": '
            '"sentiment", "id": null}; null maps nothing. Fields not named are guessed.',
        )
        dry_run = serializers.BooleanField(
            default=False, help_text="Preview and check only; nothing is imported."
        )

        def validate_mapping(self, value: object) -> dict:
            if not isinstance(value, dict):
                raise serializers.ValidationError('A JSON object, e.g. {"text": "review"}.')
            return value

    @extend_schema_serializer(component_name="OriginalUploadOutput")
    class OutputSerializer(serializers.Serializer):
        file_name = serializers.CharField()
        format = serializers.CharField(source="table.format")
        encoding = serializers.CharField(source="table.encoding")
        rows = serializers.IntegerField()
        columns = serializers.ListField(child=serializers.CharField(), source="table.columns")
        mapping = serializers.DictField(child=serializers.CharField(allow_null=True))
        mapping_problems = serializers.DictField(child=serializers.CharField(), source="problems")
        sample = serializers.ListField(
            child=serializers.DictField(), help_text="The first rows as read from the file."
        )
        labels = LabelSpellingSerializer(many=True)
        other_spellings = serializers.IntegerField()
        errors = serializers.DictField(
            child=serializers.ListField(child=serializers.CharField()),
            source="shown_errors",
            help_text="Where (row N / line N) -> problems; the first 50 rows.",
        )
        error_rows = serializers.IntegerField()
        importable = serializers.BooleanField()
        same_text_rows = serializers.IntegerField(
            help_text="Rows with the text (and context) of an original already in the "
            "campaign: importing adds them again."
        )
        imported = serializers.IntegerField()

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={200: OutputSerializer, 201: OutputSerializer},
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        preview = upload_preview(
            campaign=campaign,
            file_name=upload.name,
            content=tabular.upload_bytes(upload, max_bytes=settings.UPLOAD_MAX_BYTES),
            mapping=serializer.validated_data.get("mapping"),
        )
        imported = 0
        if not serializer.validated_data["dry_run"]:
            imported = originals_upload(campaign=campaign, preview=preview)
        data = self.OutputSerializer(
            {
                **{name: getattr(preview, name) for name in ("file_name", "rows", "mapping")},
                "table": preview.table,
                "problems": preview.problems,
                "sample": [row.values for row in preview.sample],
                "labels": preview.labels,
                "other_spellings": preview.other_spellings,
                "shown_errors": preview.shown_errors,
                "error_rows": len(preview.errors),
                "importable": preview.importable,
                "same_text_rows": preview.same_text_rows,
                "imported": imported,
            }
        ).data
        return Response(data, status=status.HTTP_201_CREATED if imported else status.HTTP_200_OK)
