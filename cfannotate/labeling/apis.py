"""REST API of a campaign's labeling stage: progress, open and pause, order by budget.

The same services as the campaign page's labeling block, with the same checks; the
campaign is the requesting researcher's own or a 404.
"""

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core.api_input import BodySerializer
from cfannotate.labeling.ordering import units_order_by_budget
from cfannotate.labeling.selectors import labeling_progress
from cfannotate.labeling.services import labeling_open, labeling_pause


@extend_schema_serializer(component_name="LabelingProgress")
class LabelingProgressSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="The campaign's status after the operation.")
    units = serializers.IntegerField()
    units_done = serializers.IntegerField()
    judgments_needed = serializers.IntegerField()
    judgments_done = serializers.IntegerField()
    percent = serializers.IntegerField()
    assignments_active = serializers.IntegerField()
    assignments_submitted = serializers.IntegerField()
    assignments_expired = serializers.IntegerField(help_text="Expired or returned.")
    gold_rounds = serializers.IntegerField(help_text="Active gold rounds.")
    training_rounds = serializers.IntegerField(help_text="Active training rounds.")
    warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="What the researcher should read after opening (empty otherwise).",
    )


def _progress_out(campaign, warnings=()) -> dict:
    progress = labeling_progress(campaign)
    return LabelingProgressSerializer(
        {
            **vars(progress),
            "percent": progress.percent,
            "status": campaign.status,
            "warnings": list(warnings),
        }
    ).data


class LabelingProgressApi(APIView):
    """Units and judgments done, assignments by state, active gold and training rounds."""

    @extend_schema(responses=LabelingProgressSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        return Response(_progress_out(campaign))


class LabelingOpenApi(APIView):
    """Open the campaign to workers. 409 when it is finished or has nothing to label;
    `warnings` says what is short (gold rounds, training round, units still building)."""

    @extend_schema(request=None, responses=LabelingProgressSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        warnings = labeling_open(campaign=campaign)
        return Response(_progress_out(campaign, warnings))


class LabelingPauseApi(APIView):
    """No new assignments; those in progress can still be finished. 409 unless open."""

    @extend_schema(request=None, responses=LabelingProgressSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        labeling_pause(campaign=campaign)
        return Response(_progress_out(campaign))


class LabelingOrderApi(APIView):
    """Corpus-level selection (Polyjuice §4.1): the open units of the `budget` most diverse
    originals are claimed first."""

    @extend_schema_serializer(component_name="LabelingOrderInput")
    class InputSerializer(BodySerializer):
        budget = serializers.IntegerField(
            min_value=1, help_text="How many originals to label first."
        )

    @extend_schema_serializer(component_name="LabelingOrderOutput")
    class OutputSerializer(serializers.Serializer):
        budget = serializers.IntegerField()
        originals = serializers.IntegerField(help_text="Originals chosen (at most the budget).")
        units = serializers.IntegerField(help_text="Open units moved to the front.")
        candidates_considered = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        summary = units_order_by_budget(
            campaign=campaign, budget=serializer.validated_data["budget"]
        )
        return Response(self.OutputSerializer(summary).data)
