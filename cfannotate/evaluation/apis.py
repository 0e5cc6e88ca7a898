"""REST API of evaluations: past runs of a campaign, one run, and a new run of Table 2 or 3.

Every endpoint is scoped to the campaign's owner; a run answers with what the page shows.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core.api_input import BodySerializer
from cfannotate.core.api_lists import choice_param, paginated_response
from cfannotate.core.pagination import PageNumbers
from cfannotate.evaluation import services
from cfannotate.evaluation.models import Evaluation, EvaluationKind
from cfannotate.evaluation.selectors import evaluation_get, evaluations_for


@extend_schema_serializer(component_name="Evaluation")
class EvaluationSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    result = serializers.JSONField(help_text="Figures of generation.evaluation, as stored.")
    parameters = serializers.JSONField()

    class Meta:
        model = Evaluation
        fields = ["id", "kind", "source", "parameters", "result", "created_at", "created_by"]


class EvaluationListApi(APIView):
    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(
        parameters=[OpenApiParameter("kind", enum=EvaluationKind.values, required=False)],
        responses=EvaluationSerializer(many=True),
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        kind = choice_param(request, "kind", EvaluationKind.values)
        return paginated_response(
            self, request, evaluations_for(campaign, kind=kind), EvaluationSerializer
        )


class EvaluationRunApi(APIView):
    """Compute Table 2 (contrast set) or Table 3 (augmentation) now and store the run."""

    @extend_schema_serializer(component_name="EvaluationRunInput")
    class InputSerializer(BodySerializer):
        kind = serializers.ChoiceField(choices=EvaluationKind.choices)
        predictions = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            allow_empty=False,
            help_text="Table 2: the model's rows, {id, label} for originals (external id) and "
            "{candidate_id, label} for counterfactuals; probabilities {label: p} may replace "
            "label.",
        )
        training_records = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            allow_empty=False,
            help_text="Table 2: rows {text, context?, label} to train the baseline on instead "
            "of cross-fitting it on the campaign's originals.",
        )
        folds = serializers.IntegerField(
            required=False,
            min_value=2,
            max_value=services.MAX_FOLDS,
            default=services.DEFAULT_FOLDS,
        )
        seed = serializers.IntegerField(
            required=False, min_value=0, max_value=services.MAX_SEED, default=0
        )
        bootstrap = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=services.MAX_BOOTSTRAP,
            default=services.DEFAULT_BOOTSTRAP,
        )
        n = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            max_value=services.MAX_SIZE,
            default=None,
            help_text="Originals in both training sets; null: the most the data allows.",
        )
        m = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            max_value=services.MAX_SIZE,
            default=None,
            help_text="Counterfactuals added (aug) or further originals (comp); null: the most "
            "the data allows.",
        )
        test_fraction = serializers.FloatField(
            required=False, min_value=0.01, max_value=0.99, default=services.DEFAULT_TEST_FRACTION
        )
        seeds = serializers.ListField(
            child=serializers.IntegerField(min_value=0, max_value=services.MAX_SEED),
            required=False,
            min_length=1,
            max_length=services.MAX_SEEDS,
            default=list(services.DEFAULT_SEEDS),
        )

    @extend_schema(request=InputSerializer, responses={201: EvaluationSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        evaluation = services.evaluation_run(
            campaign=campaign, user=request.user, **serializer.validated_data
        )
        return Response(EvaluationSerializer(evaluation).data, status=status.HTTP_201_CREATED)


class EvaluationDetailApi(APIView):
    @extend_schema(responses=EvaluationSerializer)
    def get(self, request: Request, campaign_id: int, evaluation_id: int) -> Response:
        campaign = self.campaign
        evaluation = evaluation_get(campaign=campaign, evaluation_id=evaluation_id)
        return Response(EvaluationSerializer(evaluation).data)
