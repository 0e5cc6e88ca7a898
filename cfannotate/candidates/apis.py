"""REST API of candidates: generation runs (start, progress, cancel, retry) and imports.

Every endpoint is scoped to the campaign's owner.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.campaigns.selectors import campaign_get_for_owner
from cfannotate.candidates import runs, selectors, services
from cfannotate.candidates.models import GenerationRun
from cfannotate.candidates.uploads import uploaded_bytes
from cfannotate.core.exceptions import NotFound


@extend_schema_serializer(component_name="GenerationProgress")
class ProgressSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run.id")
    state = serializers.CharField(source="run.state")
    chunks_total = serializers.IntegerField()
    chunks_done = serializers.IntegerField()
    chunks_failed = serializers.IntegerField()
    chunks_running = serializers.IntegerField()
    candidates = serializers.IntegerField()
    percent = serializers.IntegerField()
    seconds = serializers.FloatField()
    chunks_per_minute = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.FloatField(allow_null=True)


def _progress(run: GenerationRun) -> dict:
    return ProgressSerializer(selectors.run_progress(run)).data


class GenerationProgressApi(APIView):
    @extend_schema(responses=ProgressSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
        run = selectors.latest_run(campaign)
        if run is None:
            raise NotFound("This campaign has no generation run yet.")
        return Response(_progress(run))


class GenerationStartApi(APIView):
    @extend_schema_serializer(component_name="GenerationStartInput")
    class InputSerializer(serializers.Serializer):
        chunk_size = serializers.IntegerField(
            min_value=1, max_value=10_000, default=runs.DEFAULT_CHUNK_SIZE
        )

    @extend_schema(request=InputSerializer, responses={201: ProgressSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = runs.generation_run_start(campaign=campaign, **serializer.validated_data)
        return Response(_progress(run), status=status.HTTP_201_CREATED)


class _RunActionApi(APIView):
    run_action = None

    @extend_schema(request=None, responses=ProgressSerializer)
    def post(self, request: Request, campaign_id: int, run_id: int) -> Response:
        campaign = campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
        run = get_object_or_404(GenerationRun, pk=run_id, campaign=campaign)
        type(self).run_action(run=run)
        run.refresh_from_db()
        return Response(_progress(run))


class GenerationCancelApi(_RunActionApi):
    run_action = staticmethod(runs.generation_run_cancel)


class GenerationRetryApi(_RunActionApi):
    run_action = staticmethod(runs.generation_run_retry)


class CandidateImportApi(APIView):
    """Upload the researcher's own candidates (CSV or JSONL); all rows or none."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="CandidateImportInput")
    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="CSV (with a header) or JSONL: original_id, text, optional intended_label."
        )
        score_fluency = serializers.BooleanField(
            default=False, help_text="Score fluency with the campaign's LM (slower)."
        )

    @extend_schema_serializer(component_name="CandidateImportOutput")
    class OutputSerializer(serializers.Serializer):
        imported = serializers.IntegerField()
        kept = serializers.IntegerField()
        originals = serializers.IntegerField()

    @extend_schema(
        request={"multipart/form-data": InputSerializer}, responses={201: OutputSerializer}
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        summary = services.candidates_import(
            campaign=campaign,
            file_name=upload.name,
            content=uploaded_bytes(upload),
            score_fluency=serializer.validated_data["score_fluency"],
        )
        return Response(self.OutputSerializer(summary).data, status=status.HTTP_201_CREATED)
