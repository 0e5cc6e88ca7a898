"""REST API of exports: `GET /api/campaigns/<id>/exports/` says what each file holds now;
`GET /api/campaigns/<id>/exports/<kind>/?format=jsonl|csv` streams one."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from cfannotate.exports.files import DEFAULT_FORMAT, export_prepare, export_response
from cfannotate.exports.formats import FORMATS
from cfannotate.exports.selectors import EXPORT_KINDS, export_sizes


class ErrorsAsJson(BaseContentNegotiation):
    """Here `?format=` names the file's format, not a DRF renderer; errors are always JSON."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


@extend_schema_serializer(component_name="ExportFile")
class ExportFileSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(EXPORT_KINDS))
    title = serializers.CharField()
    rows = serializers.IntegerField(help_text="Rows the file has now.")
    url = serializers.CharField(help_text="GET it with ?format=jsonl or ?format=csv.")


@extend_schema_serializer(component_name="Exports")
class ExportsSerializer(serializers.Serializer):
    kept = serializers.IntegerField(help_text="Counterfactuals with a kept label.")
    labels_updated_at = serializers.DateTimeField(
        allow_null=True, help_text="When quality control last wrote the labels."
    )
    files = ExportFileSerializer(many=True)


class ExportListApi(APIView):
    """What each export holds now (its rows, as the files select them) and where to get it."""

    @extend_schema(operation_id="campaign_exports", responses=ExportsSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        sizes = export_sizes(self.campaign)
        files = [
            {
                "kind": kind.name,
                "title": kind.title,
                "rows": sizes.rows(kind.name),
                "url": reverse("api-export", args=[campaign_id, kind.name], request=request),
            }
            for kind in EXPORT_KINDS.values()
        ]
        output = {"kept": sizes.kept, "labels_updated_at": sizes.labels_updated_at, "files": files}
        return Response(ExportsSerializer(output).data)


class ExportApi(APIView):
    """Stream a campaign's contrast set, augmentation set or raw judgments as a file."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = ErrorsAsJson

    class InputSerializer(serializers.Serializer):
        format = serializers.CharField(required=False, allow_blank=True, default=DEFAULT_FORMAT)
        include_gold = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="campaign_export",
        parameters=[
            OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=list(EXPORT_KINDS)),
            OpenApiParameter("format", str, enum=list(FORMATS), default=DEFAULT_FORMAT),
            OpenApiParameter(
                "include_gold",
                bool,
                description="Judgments only: add the gold and training rounds' ones.",
            ),
        ],
        responses={
            (200, "application/jsonl"): OpenApiTypes.BINARY,
            (200, "text/csv"): OpenApiTypes.BINARY,
        },
    )
    def get(self, request: Request, campaign_id: int, kind: str):
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        export = export_prepare(campaign=campaign, kind=kind, **serializer.validated_data)
        return export_response(export)
