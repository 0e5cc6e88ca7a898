"""REST API of candidates: generation runs (start, progress, cancel, retry), imports, and
review (list with filters, accept, reject, edit, bulk review).

Every endpoint is scoped to the campaign's owner.
"""

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.candidates import imports, predictions, review, runs, selectors
from cfannotate.candidates.forms import FLUENCY_BOUND
from cfannotate.candidates.models import (
    CandidateImport,
    CandidateQuerySet,
    CandidateSource,
    CandidateStatus,
    ControlCode,
    GenerationRun,
    ImportState,
)
from cfannotate.candidates.uploads import uploaded_bytes
from cfannotate.core.api_input import BodySerializer, QuerySerializer
from cfannotate.core.api_lists import MAX_ID, paginated_response
from cfannotate.core.exceptions import NotFound
from cfannotate.core.pagination import PageNumbers
from cfannotate.core.upload_handlers import OneFileField


class ChunkFailureSerializer(serializers.Serializer):
    chunk = serializers.IntegerField()
    error = serializers.CharField()


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
    eta_seconds = serializers.FloatField(
        allow_null=True, help_text="The same figure as seconds_left (its first name)."
    )
    originals_total = serializers.IntegerField(
        help_text="Originals in the run's chunks (cancelled chunks left out)."
    )
    originals_done = serializers.IntegerField(
        help_text="Finished chunks' originals, and those running chunks have reported done "
        "(workers report about every second)."
    )
    originals_cancelled = serializers.IntegerField(
        help_text="Originals of the chunks a cancel dropped before a worker took them."
    )
    seconds_left = serializers.FloatField(
        allow_null=True,
        help_text="Time left at the rate of originals so far; null while queued, before "
        "the first original is done, and once the run ends.",
    )
    failures = ChunkFailureSerializer(
        many=True,
        help_text="The first failed chunks and why (e.g. the inference server's message).",
    )


def _progress(run: GenerationRun) -> dict:
    return ProgressSerializer(selectors.run_progress(run)).data


class GenerationProgressApi(APIView):
    @extend_schema(responses=ProgressSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        run = selectors.latest_run(campaign)
        if run is None:
            raise NotFound("This campaign has no generation run yet.")
        return Response(_progress(run))


class GenerationStartApi(APIView):
    @extend_schema_serializer(component_name="GenerationStartInput")
    class InputSerializer(BodySerializer):
        chunk_size = serializers.IntegerField(
            min_value=1, max_value=10_000, default=runs.DEFAULT_CHUNK_SIZE
        )
        original_ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            required=False,
            allow_empty=False,
            help_text="Generate for these originals only (e.g. a retry of those with none kept).",
        )
        not_generated_only = serializers.BooleanField(
            default=False,
            help_text="Generate for the originals never generated and without candidates "
            "(not with original_ids).",
        )

    @extend_schema(request=InputSerializer, responses={201: ProgressSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = runs.generation_run_start(campaign=campaign, **serializer.validated_data)
        return Response(_progress(run), status=status.HTTP_201_CREATED)


class _RunActionApi(APIView):
    run_action = None

    @extend_schema(request=None, responses=ProgressSerializer)
    def post(self, request: Request, campaign_id: int, run_id: int) -> Response:
        campaign = self.campaign
        run = selectors.generation_run_get(campaign=campaign, run_id=run_id)
        type(self).run_action(run=run)
        run.refresh_from_db()
        return Response(_progress(run))


class GenerationCancelApi(_RunActionApi):
    run_action = staticmethod(runs.generation_run_cancel)


class GenerationRetryApi(_RunActionApi):
    run_action = staticmethod(runs.generation_run_retry)


@extend_schema_serializer(component_name="GenerationDropCount")
class DropCountSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="The filter that dropped them, e.g. truncated.")
    label = serializers.CharField(help_text="The reason in words.")
    count = serializers.IntegerField()


@extend_schema_serializer(component_name="GenerationSkip")
class SkipReasonSerializer(serializers.Serializer):
    generator = serializers.CharField()
    reason = serializers.CharField(help_text="Why the generator could not perturb it.")
    not_for_label = serializers.BooleanField(
        help_text="The generator does not convert this original's label, so it tried nothing "
        "(e.g. causal-strengthen on a causal sentence)."
    )


@extend_schema_serializer(component_name="OriginalGeneration")
class OriginalGenerationSerializer(serializers.Serializer):
    original = serializers.IntegerField(source="original.pk")
    original_external_id = serializers.CharField(source="original.external_id")
    state = serializers.ChoiceField(
        choices=[
            selectors.GenerationState.NOT_GENERATED,
            selectors.GenerationState.GENERATING,
            selectors.GenerationState.FAILED,
            selectors.GenerationState.GENERATED,
        ],
        help_text="From its latest generation chunk.",
    )
    kept = serializers.IntegerField(
        help_text="Passed every filter and not rejected, and can be selected for labeling."
    )
    rewrites = serializers.IntegerField(
        help_text="Passed the filters, but `global` rewrites too far from the original to be "
        "counterfactuals (Polyjuice A.2): never selected, not counted in `kept`."
    )
    selected = serializers.IntegerField()
    rejected = serializers.IntegerField()
    filtered = serializers.IntegerField(help_text="Dropped by a filter; `dropped` says which.")
    dropped = DropCountSerializer(many=True)
    skipped = SkipReasonSerializer(many=True)
    made = serializers.IntegerField(
        allow_null=True,
        help_text="Distinct candidates its last finished run made (before the filters); "
        "null when not recorded.",
    )
    why = serializers.CharField(help_text="Why no candidate was kept; empty when some were.")


class GenerationStatusApi(APIView):
    """Per original: candidates kept, dropped by each filter, selected, and why none was kept."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    class FilterSerializer(serializers.Serializer):
        empty = serializers.BooleanField(
            required=False, default=False, help_text="Only originals with no kept candidate."
        )

    @extend_schema(parameters=[FilterSerializer], responses=OriginalGenerationSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        query = self.FilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        # A page of originals first, then the statuses of that page alone.
        statuses = selectors.generation_status_paged(campaign, empty=query.validated_data["empty"])
        return paginated_response(self, request, statuses, OriginalGenerationSerializer)


@extend_schema_serializer(component_name="CandidateImport")
class CandidateImportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(
        choices=ImportState.choices,
        help_text="queued and running: poll this import's URL; done: the candidates are "
        "stored; failed: `error` and `fields` say why (nothing was stored); cancelled.",
    )
    file_name = serializers.CharField()
    score_fluency = serializers.BooleanField()
    rows_total = serializers.IntegerField()
    rows_done = serializers.IntegerField(help_text="Rows annotated so far.")
    percent = serializers.IntegerField()
    seconds_left = serializers.FloatField(
        allow_null=True, help_text="At the pace so far, while running."
    )
    stalled = serializers.BooleanField(
        help_text="Running without progress for 10 minutes: its worker may have stopped; "
        "cancel it and import again."
    )
    imported = serializers.IntegerField(help_text="New candidates stored (when done).")
    kept = serializers.IntegerField(help_text="Of those, fluent (all, unless fluency scored).")
    originals = serializers.IntegerField(help_text="Originals they belong to (when done).")
    error = serializers.CharField(help_text="Why it failed; empty otherwise.")
    fields = serializers.DictField(
        source="error_fields",
        child=serializers.ListField(child=serializers.CharField()),
        help_text='Where it failed ("row 3": [problems]), as a refused upload\'s fields.',
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField(help_text="This import, to poll.")
    message = serializers.SerializerMethodField(help_text="Where it stands, in words.")

    def get_url(self, job: CandidateImport) -> str:
        return self.context["request"].build_absolute_uri(_import_path(job))

    def get_message(self, job: CandidateImport) -> str:
        return imports.import_message(job)


def _import_path(job: CandidateImport) -> str:
    return reverse(
        "api-candidate-import-detail",
        kwargs={"campaign_id": job.campaign_id, "import_id": job.pk},
    )


def _import_body(request: Request, job: CandidateImport) -> dict:
    return CandidateImportSerializer(job, context={"request": request}).data


class CandidateImportApi(APIView):
    """Upload the researcher's own candidates (CSV or JSONL); all rows or none. The rows are
    checked in the request (400 naming every bad row); a valid file is annotated and stored
    by a background task: the answer (202) is the import, to poll at its `url`."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="CandidateImportInput")
    class InputSerializer(BodySerializer):
        file = OneFileField(
            help_text="CSV (with a header) or JSONL: original_id, text, optional intended_label."
        )
        score_fluency = serializers.BooleanField(
            default=False, help_text="Score fluency with the campaign's LM (slower)."
        )

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={202: CandidateImportSerializer},
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        job = imports.candidate_import_start(
            campaign=campaign,
            user=request.user,
            file_name=upload.name,
            content=uploaded_bytes(upload),
            score_fluency=serializer.validated_data["score_fluency"],
        )
        body = _import_body(request, job)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class CandidateImportDetailApi(APIView):
    """One import of the researcher's own candidates: its progress, or how it ended."""

    @extend_schema(responses=CandidateImportSerializer)
    def get(self, request: Request, campaign_id: int, import_id: int) -> Response:
        job = imports.candidate_import_of(self.campaign, import_id)
        return Response(_import_body(request, job))


class CandidateImportCancelApi(APIView):
    """Cancel a queued or running import: nothing of it is stored (409 once it ended)."""

    @extend_schema(request=None, responses=CandidateImportSerializer)
    def post(self, request: Request, campaign_id: int, import_id: int) -> Response:
        job = imports.candidate_import_cancel(campaign=self.campaign, import_id=import_id)
        return Response(_import_body(request, job))


class CandidatePredictionsUploadApi(APIView):
    """Upload the researcher's own predicted labels for candidates (CSV or JSONL); all rows
    or none. Selection weighs them under any classifier but "none", and a computed
    prediction never replaces an uploaded one."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="CandidatePredictionsInput")
    class InputSerializer(BodySerializer):
        file = OneFileField(
            help_text="CSV (with a header) or JSONL: id (the candidate's), label, optional "
            "confidence (0 to 1; default 1)."
        )

    @extend_schema_serializer(component_name="CandidatePredictionsOutput")
    class OutputSerializer(serializers.Serializer):
        updated = serializers.IntegerField(help_text="Candidates whose prediction was stored.")

    @extend_schema(
        request={"multipart/form-data": InputSerializer}, responses={200: OutputSerializer}
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        updated = predictions.candidate_predictions_upload(
            campaign=campaign, file_name=upload.name, content=uploaded_bytes(upload)
        )
        return Response(self.OutputSerializer({"updated": updated}).data)


# --------------------------------------------------------------------------- review


@extend_schema_serializer(component_name="Candidate")
class CandidateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    original = serializers.IntegerField(source="original_id")
    original_external_id = serializers.CharField(source="original.external_id")
    original_text = serializers.CharField(source="original.text")
    text = serializers.CharField()
    source = serializers.CharField()
    generator = serializers.CharField()
    engine = serializers.CharField(
        source="metadata.engine",
        default=None,
        allow_null=True,
        help_text="Where the model that made it ran (loop, continuous, server); null if none.",
    )
    model = serializers.CharField(
        source="metadata.model",
        default=None,
        allow_null=True,
        help_text="The model that made it; null if none.",
    )
    control_code = serializers.CharField()
    intended_label = serializers.CharField(source="intended_label.value", allow_null=True)
    edit = serializers.JSONField()
    fluency_full = serializers.FloatField(allow_null=True)
    fluency_changed = serializers.FloatField(allow_null=True)
    predicted_label = serializers.CharField(
        source="predicted_label.value",
        allow_null=True,
        help_text="The label the campaign's classifier predicts (Campaign.flip_classifier).",
    )
    predicted_confidence = serializers.FloatField(
        allow_null=True, help_text="The classifier's probability of its predicted label."
    )
    prediction_source = serializers.CharField(
        help_text="baseline, model or uploaded; empty: no prediction yet."
    )
    status = serializers.CharField()
    unit = serializers.IntegerField(source="unit_id", allow_null=True)
    unit_claimed = serializers.BooleanField(
        help_text="A worker was given its unit: it can no longer be rejected or edited."
    )
    gold_round = serializers.IntegerField(source="gold_round_id", allow_null=True)
    judged = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class CandidateFilterSerializer(QuerySerializer):
    """The query parameters of the candidate list; a bad one is a 400 naming it."""

    generator = serializers.CharField(required=False, allow_blank=True, max_length=60)
    control_code = serializers.ChoiceField(
        choices=ControlCode.choices, required=False, allow_blank=True
    )
    status = serializers.ChoiceField(
        choices=CandidateStatus.choices, required=False, allow_blank=True
    )
    source = serializers.ChoiceField(
        choices=CandidateSource.choices, required=False, allow_blank=True
    )
    min_fluency = serializers.FloatField(
        required=False,
        min_value=-FLUENCY_BOUND,
        max_value=FLUENCY_BOUND,
        help_text="Lowest fluency Δ (log p(x̂) - log p(x), whole sentence); unscored are left out.",
    )
    max_fluency = serializers.FloatField(
        required=False, min_value=-FLUENCY_BOUND, max_value=FLUENCY_BOUND
    )
    search = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="In the candidate's or the original's text, or the original's id.",
    )
    original = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="An original's id."
    )
    ordering = serializers.ChoiceField(
        choices=list(CandidateQuerySet.ORDERINGS),
        required=False,
        allow_blank=True,
        help_text="original (the default): by original, within each what workers are shown, "
        "then the other kept edits, then global rewrites, then the filtered and rejected, "
        "the most fluent first in each; fluency / -fluency: most / least fluent first; "
        "created / -created: oldest / newest first.",
    )

    def validate(self, attrs):
        low, high = attrs.get("min_fluency"), attrs.get("max_fluency")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"max_fluency": ["Below min_fluency."]})
        return attrs

    def filters(self) -> selectors.CandidateFilters:
        return selectors.CandidateFilters(**self.validated_data)


def _candidate_out(campaign, candidate_id: int) -> dict:
    candidate = selectors.candidates_filtered(campaign, selectors.CandidateFilters()).filter(
        pk=candidate_id
    )
    return CandidateSerializer(candidate.get()).data


def _candidate_of(view, candidate_id: int):
    """The guarded campaign of the API view and its candidate `candidate_id` (404 if none)."""
    campaign = view.campaign
    return campaign, review.candidate_get(campaign=campaign, candidate_id=candidate_id)


class CandidateListApi(APIView):
    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(parameters=[CandidateFilterSerializer], responses=CandidateSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        query = CandidateFilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        candidates = selectors.candidates_paged(campaign, query.filters())
        return paginated_response(self, request, candidates, CandidateSerializer)


class CandidateDetailApi(APIView):
    """One candidate; PATCH its text to edit it (re-annotated, fluency unknown)."""

    @extend_schema_serializer(component_name="CandidateEditInput")
    class InputSerializer(BodySerializer):
        text = serializers.CharField(max_length=20_000, trim_whitespace=False)

    @extend_schema(responses=CandidateSerializer)
    def get(self, request: Request, campaign_id: int, candidate_id: int) -> Response:
        campaign, candidate = _candidate_of(self, candidate_id)
        return Response(_candidate_out(campaign, candidate.pk))

    @extend_schema(request=InputSerializer, responses=CandidateSerializer)
    def patch(self, request: Request, campaign_id: int, candidate_id: int) -> Response:
        campaign, candidate = _candidate_of(self, candidate_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        review.candidate_edit(candidate=candidate, text=serializer.validated_data["text"])
        return Response(_candidate_out(campaign, candidate.pk))


class _CandidateActionApi(APIView):
    # Not `action`: DRF and drf-spectacular read that name as a viewset's action.
    review_action = None

    @extend_schema(request=None, responses=CandidateSerializer)
    def post(self, request: Request, campaign_id: int, candidate_id: int) -> Response:
        campaign, candidate = _candidate_of(self, candidate_id)
        type(self).review_action(candidate=candidate)
        return Response(_candidate_out(campaign, candidate.pk))


class CandidateAcceptApi(_CandidateActionApi):
    """Select the candidate for labeling: into an unclaimed unit of its original, or a new one."""

    review_action = staticmethod(review.candidate_accept)


class CandidateRejectApi(_CandidateActionApi):
    """Keep the candidate out of labeling; refused once a worker was given it."""

    review_action = staticmethod(review.candidate_reject)


class CandidateReviewApi(APIView):
    """Accept and reject many candidates: all or none, every refused id named."""

    @extend_schema_serializer(component_name="CandidateReviewInput")
    class InputSerializer(BodySerializer):
        accept = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            required=False,
            max_length=review.MAX_BULK,
        )
        reject = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            required=False,
            max_length=review.MAX_BULK,
        )

    @extend_schema_serializer(component_name="CandidateReviewOutput")
    class OutputSerializer(serializers.Serializer):
        accepted = serializers.IntegerField()
        rejected = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        summary = review.candidates_review(campaign=campaign, **serializer.validated_data)
        return Response(self.OutputSerializer(summary).data)
