"""REST API of quality control: the report, an on-demand refresh, worker decisions.

Every endpoint is scoped to the campaign's owner; the numbers are those of the page.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core.api_input import BodySerializer, QuerySerializer
from cfannotate.core.api_lists import choice_param, paginated_response
from cfannotate.core.exceptions import NotFound
from cfannotate.core.pagination import PageNumbers
from cfannotate.quality.decisions import (
    decision_update,
    decisions_apply,
    decisions_confirm_proposed,
)
from cfannotate.quality.models import DecisionAction, DecisionState, WorkerDecision
from cfannotate.quality.selectors import (
    LABEL_STATES,
    VERDICT_FILTERS,
    decisions_for,
    kept_labels_for,
    quality_report,
    worker_rows,
    workers_listed,
)
from cfannotate.quality.services import quality_refresh


@extend_schema_serializer(component_name="AgreementBasis")
class BasisSerializer(serializers.Serializer):
    items = serializers.IntegerField()
    judgments = serializers.IntegerField()
    fewest = serializers.IntegerField(help_text="Fewest judgments of an item; 0 when none.")
    most = serializers.IntegerField(help_text="Most judgments of an item; 0 when none.")


class AgreementSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="Items with two or more judgments.")
    raw = serializers.FloatField(allow_null=True)
    cohen_kappa = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    basis = BasisSerializer(
        help_text="What raw agreement, Fleiss' kappa and Krippendorff's alpha cover: "
        "items with two or more judgments."
    )
    cohen_basis = BasisSerializer(
        help_text="What Cohen's kappa covers: items with exactly two judgments."
    )
    raw_note = serializers.CharField()
    cohen_kappa_note = serializers.CharField(
        help_text="What the value is computed on, or why there is none, in words."
    )
    fleiss_kappa_note = serializers.CharField()
    krippendorff_alpha_note = serializers.CharField()


class WorkerQualitySerializer(serializers.Serializer):
    worker = serializers.CharField(source="quality.worker.external_id")
    platform = serializers.CharField(source="quality.worker.platform")
    qualified = serializers.BooleanField(source="quality.qualified")
    settled = serializers.BooleanField(source="quality.settled")
    held_until = serializers.IntegerField(
        source="quality.held_until",
        allow_null=True,
        help_text=(
            "Short of the gold share alone before the gold sample is answered: the worker "
            "keeps working and their votes wait until this many gold are answered."
        ),
    )
    reasons = serializers.ListField(source="quality.reasons", child=serializers.CharField())
    rounds = serializers.IntegerField(source="quality.rounds")
    median_seconds = serializers.FloatField(source="quality.median_seconds", allow_null=True)
    gold_correct = serializers.IntegerField(source="quality.gold_correct")
    gold_total = serializers.IntegerField(source="quality.gold_total")
    gold_accuracy = serializers.FloatField(source="quality.gold_accuracy", allow_null=True)
    label_counts = serializers.DictField(source="quality.label_counts")
    distribution_distance = serializers.FloatField(
        source="quality.distribution_distance", allow_null=True
    )


@extend_schema_serializer(component_name="QualitySummary")
class SummarySerializer(serializers.Serializer):
    workers = serializers.IntegerField()
    qualified = serializers.IntegerField()
    filtered = serializers.IntegerField()
    on_hold = serializers.IntegerField(
        help_text="Short of the gold share before the gold sample is answered: still working."
    )
    unsettled = serializers.IntegerField()
    judgments = serializers.IntegerField()
    candidates_voted = serializers.IntegerField()
    kept = serializers.IntegerField()
    discarded = serializers.IntegerField()
    needs_more = serializers.IntegerField()
    extra_judgments = serializers.IntegerField()
    has_gold = serializers.BooleanField()


@extend_schema_serializer(component_name="GoldCoverage")
class GoldCoverageSerializer(serializers.Serializer):
    gold_rounds = serializers.IntegerField()
    per_assignment = serializers.IntegerField()
    assignments_per_worker = serializers.IntegerField()
    assignments_needed = serializers.IntegerField()
    workers_out_of_gold = serializers.IntegerField()
    message = serializers.CharField()


class RuleEffectSerializer(serializers.Serializer):
    rule = serializers.CharField()
    setting = serializers.CharField(help_text="Its name on the settings page.")
    workers = serializers.IntegerField(help_text="Workers it removed (maybe with others).")
    alone = serializers.IntegerField(help_text="Workers it removed and no other rule did.")
    careful_alone = serializers.IntegerField(
        help_text="Of those, workers with at least 80 % of their gold right."
    )
    judgments = serializers.IntegerField(help_text="Real-round judgments set aside.")


@extend_schema_serializer(component_name="FilterEffects")
class FilterEffectsSerializer(serializers.Serializer):
    rules = RuleEffectSerializer(many=True)
    decided = serializers.IntegerField()
    waiting = serializers.IntegerField()
    capped = serializers.IntegerField()
    hints = serializers.ListField(child=serializers.CharField())


@extend_schema_serializer(component_name="ClassifierCheck")
class ClassifierCheckSerializer(serializers.Serializer):
    source = serializers.CharField(help_text="Where the predictions came from.")
    judged = serializers.IntegerField(help_text="Kept counterfactuals with a predicted label.")
    agrees = serializers.IntegerField(help_text="Of those, predicted the crowd's kept label.")
    predicted_flips = serializers.IntegerField(help_text="Predicted another label than x's.")
    confirmed_flips = serializers.IntegerField(
        help_text="Of those, the crowd kept that very label."
    )
    crowd_flips = serializers.IntegerField(help_text="The crowd kept another label than x's.")
    found_flips = serializers.IntegerField(help_text="Of those, predicted the crowd's label.")
    agreement = serializers.FloatField(allow_null=True)
    flip_precision = serializers.FloatField(allow_null=True)
    flip_recall = serializers.FloatField(allow_null=True)


@extend_schema_serializer(component_name="QualityReport")
class ReportSerializer(serializers.Serializer):
    summary = SummarySerializer()
    label_agreement = AgreementSerializer()
    label_agreement_qualified = AgreementSerializer()
    validity_agreement = AgreementSerializer()
    workers = WorkerQualitySerializer(
        many=True,
        help_text="Every worker, filtered ones first; a page at a time, filtered by verdict "
        "and searched by id: GET /api/campaigns/<id>/quality/workers/.",
    )
    round_seconds = serializers.ListField(child=serializers.FloatField())
    gold_coverage = GoldCoverageSerializer()
    effects = FilterEffectsSerializer()
    classifier = ClassifierCheckSerializer(
        many=True,
        help_text="The classifier in the loop against the crowd's kept labels, per source.",
    )


class QualityReportApi(APIView):
    @extend_schema(responses=ReportSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        return Response(ReportSerializer(quality_report(campaign)).data)


class SearchSerializer(QuerySerializer):
    """A worker list's search, as the quality page's lists have it."""

    search = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Part of the worker's id."
    )

    def searched(self) -> str:
        return self.validated_data.get("search", "").strip()


class QualityWorkerListApi(APIView):
    """Each worker's standing, a page at a time: filtered ones first, then the furthest label
    distributions, then by id."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "verdict",
                enum=list(VERDICT_FILTERS),
                required=False,
                description="filtered, on_hold (short of the gold share before the gold sample), "
                "kept, working (an assignment still open): any when absent.",
            ),
            SearchSerializer,
        ],
        responses=WorkerQualitySerializer(many=True),
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        verdict = choice_param(request, "verdict", VERDICT_FILTERS) or ""
        query = SearchSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        qualities = workers_listed(campaign, verdict=verdict, search=query.searched())
        return paginated_response(
            self,
            request,
            qualities,
            WorkerQualitySerializer,
            rows=lambda page: worker_rows(campaign, page),
        )


class QualityRefreshApi(APIView):
    """Run the worker filter, the vote, re-queues and decision proposals now."""

    @extend_schema_serializer(component_name="QualityRefreshOutput")
    class OutputSerializer(serializers.Serializer):
        workers = serializers.IntegerField()
        qualified = serializers.IntegerField()
        candidates = serializers.IntegerField()
        kept = serializers.IntegerField()
        requeued_units = serializers.IntegerField()
        decisions_proposed = serializers.IntegerField()

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        return Response(self.OutputSerializer(quality_refresh(campaign=campaign)).data)


@extend_schema_serializer(component_name="WorkerDecision")
class DecisionSerializer(serializers.ModelSerializer):
    worker = serializers.CharField(source="worker.external_id")
    platform = serializers.CharField(source="worker.platform")

    class Meta:
        model = WorkerDecision
        fields = [
            "id",
            "worker",
            "platform",
            "assignment",
            "action",
            "amount",
            "reason",
            "state",
            "proposed_by_filters",
            "error",
            "created_at",
            "applied_at",
        ]


class DecisionListApi(APIView):
    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(
        parameters=[
            OpenApiParameter("state", enum=DecisionState.values, required=False),
            OpenApiParameter("action", enum=DecisionAction.values, required=False),
            SearchSerializer,
        ],
        responses=DecisionSerializer(many=True),
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        state = choice_param(request, "state", DecisionState.values)
        action = choice_param(request, "action", DecisionAction.values) or ""
        query = SearchSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        decisions = decisions_for(campaign, state=state, action=action, search=query.searched())
        return paginated_response(self, request, decisions, DecisionSerializer)


class DecisionUpdateApi(APIView):
    """Confirm, dismiss or change a decision before it is sent."""

    @extend_schema_serializer(component_name="WorkerDecisionUpdate")
    class InputSerializer(BodySerializer):
        state = serializers.ChoiceField(
            choices=[DecisionState.PROPOSED, DecisionState.CONFIRMED, DecisionState.DISMISSED]
        )
        action = serializers.ChoiceField(choices=DecisionAction.choices, required=False)
        amount = serializers.DecimalField(
            max_digits=8, decimal_places=2, required=False, min_value=0
        )
        reason = serializers.CharField(required=False, max_length=1000)

    @extend_schema(request=InputSerializer, responses=DecisionSerializer)
    def post(self, request: Request, campaign_id: int, decision_id: int) -> Response:
        campaign = self.campaign
        decision = WorkerDecision.objects.filter(campaign=campaign, id=decision_id).first()
        if decision is None:
            raise NotFound(f"No decision {decision_id} in this campaign.")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        decision = decision_update(
            decision=decision, user=request.user, **serializer.validated_data
        )
        return Response(DecisionSerializer(decision).data)


class DecisionsConfirmApi(APIView):
    """Confirm every proposal the filters made and nobody has touched ("accept them all")."""

    @extend_schema_serializer(component_name="DecisionsConfirmOutput")
    class OutputSerializer(serializers.Serializer):
        confirmed = serializers.IntegerField()

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        confirmed = decisions_confirm_proposed(campaign=campaign, user=request.user)
        return Response({"confirmed": confirmed})


class DecisionsApplyApi(APIView):
    """Send every confirmed decision to the workers' platforms."""

    @extend_schema_serializer(component_name="DecisionsApplyOutput")
    class OutputSerializer(serializers.Serializer):
        applied = serializers.IntegerField()
        failed = serializers.IntegerField()

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        applied, failed = decisions_apply(campaign=campaign)
        return Response({"applied": applied, "failed": failed})


@extend_schema_serializer(component_name="CandidateLabel")
class CandidateLabelSerializer(serializers.Serializer):
    candidate = serializers.IntegerField(source="candidate_id")
    original_id = serializers.CharField(source="candidate.original.external_id")
    text = serializers.CharField(source="candidate.text")
    kept = serializers.BooleanField()
    label = serializers.CharField(source="label.value", allow_null=True)
    is_valid = serializers.BooleanField(allow_null=True)
    needs_more = serializers.BooleanField()
    votes = serializers.IntegerField(help_text="Submitted judgments, every worker's.")
    qualified_votes = serializers.IntegerField(help_text="From workers who passed the filters.")
    label_votes = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Qualified votes per label value; every campaign label, 0 where none.",
    )
    valid_votes = serializers.IntegerField(help_text="Qualified votes that judged it valid.")
    agreement = serializers.FloatField(help_text="Share of qualified votes on the top label.")
    dawid_skene_label = serializers.CharField(source="ds_label.value", allow_null=True)
    dawid_skene_confidence = serializers.FloatField(source="ds_confidence", allow_null=True)
    glad_label = serializers.CharField(source="glad_label.value", allow_null=True)
    mace_label = serializers.CharField(source="mace_label.value", allow_null=True)
    updated_at = serializers.DateTimeField()


class CandidateLabelListApi(APIView):
    """Each voted counterfactual's kept label, its votes and their agreement."""

    pagination_class = PageNumbers

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "state",
                enum=LABEL_STATES,
                required=False,
                description="kept; needs_more (waiting for votes); discarded (no label).",
            )
        ],
        responses=CandidateLabelSerializer(many=True),
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        state = choice_param(request, "state", LABEL_STATES)
        labels = kept_labels_for(campaign, state=state)
        return paginated_response(self, request, labels, CandidateLabelSerializer)
