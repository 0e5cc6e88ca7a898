"""REST API of campaigns and their originals, scoped to the campaign owner."""

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.campaigns import selectors, services
from cfannotate.campaigns.models import SETTING_FIELDS, Campaign, TaskType
from cfannotate.core.api_input import BodySerializer
from cfannotate.core.api_lists import paginated_response
from cfannotate.core.pagination import PageNumbers


class LabelSerializer(serializers.Serializer):
    value = serializers.CharField(max_length=60)
    display_name = serializers.CharField(max_length=80, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


class CampaignOutputSerializer(serializers.ModelSerializer):
    labels = LabelSerializer(many=True, read_only=True)

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "slug",
            "status",
            "task_type",
            "text_name",
            "context_name",
            "instructions",
            "labels",
            "created_at",
            *SETTING_FIELDS,
            "flip_classifier_check",
        ]
        read_only_fields = ["flip_classifier_check"]


class CampaignListApi(APIView):
    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(responses=CampaignOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        campaigns = selectors.campaigns_for_owner(request.user).prefetch_related("labels")
        return paginated_response(self, request, campaigns, CampaignOutputSerializer)


class CampaignCreateApi(APIView):
    @extend_schema_serializer(component_name="CampaignCreateInput")
    class InputSerializer(BodySerializer):
        name = serializers.CharField(max_length=200)
        task_type = serializers.ChoiceField(choices=TaskType.choices)
        labels = LabelSerializer(many=True, required=False)
        text_name = serializers.CharField(max_length=60, required=False)
        context_name = serializers.CharField(max_length=60, required=False, allow_blank=True)
        instructions = serializers.CharField(required=False, allow_blank=True)
        settings = serializers.DictField(required=False)

    @extend_schema(request=InputSerializer, responses={201: CampaignOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        campaign = services.campaign_create(owner=request.user, **serializer.validated_data)
        return Response(CampaignOutputSerializer(campaign).data, status=status.HTTP_201_CREATED)


class CampaignDetailApi(APIView):
    @extend_schema(responses=CampaignOutputSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        return Response(CampaignOutputSerializer(campaign).data)


class CampaignUpdateApi(APIView):
    """Change per-stage settings, e.g. the generators: `{"settings": {"generators": [...]}}`."""

    @extend_schema_serializer(component_name="CampaignUpdateInput")
    class InputSerializer(BodySerializer):
        settings = serializers.DictField(allow_empty=False)

    @extend_schema(request=InputSerializer, responses=CampaignOutputSerializer)
    def patch(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        campaign = services.campaign_update(
            campaign=campaign, settings=serializer.validated_data["settings"]
        )
        return Response(CampaignOutputSerializer(campaign).data)


class OriginalOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    text = serializers.CharField()
    context = serializers.CharField()
    label = serializers.CharField(source="label.value")
    priority = serializers.FloatField()


class OriginalListApi(APIView):
    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(responses=OriginalOutputSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        originals = selectors.originals_of(campaign)
        return paginated_response(self, request, originals, OriginalOutputSerializer)


class OriginalImportApi(APIView):
    @extend_schema_serializer(component_name="OriginalImportInput")
    class InputSerializer(BodySerializer):
        records = serializers.ListField(
            child=serializers.DictField(), allow_empty=False, max_length=100_000
        )

    @extend_schema_serializer(component_name="OriginalImportOutput")
    class OutputSerializer(serializers.Serializer):
        imported = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        imported = services.originals_import(
            campaign=campaign, records=serializer.validated_data["records"]
        )
        return Response({"imported": imported}, status=status.HTTP_201_CREATED)


class OriginalPriorityApi(APIView):
    """Rank originals for labeling by a model's mistakes and uncertainty (§4.4)."""

    @extend_schema_serializer(component_name="PriorityInput")
    class InputSerializer(BodySerializer):
        predictions = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            allow_empty=False,
            help_text="Rows {id, label} or {id, probabilities: {label: p}}; omit to use the "
            "built-in baseline.",
        )

    @extend_schema_serializer(component_name="PriorityOutput")
    class OutputSerializer(serializers.Serializer):
        originals = serializers.IntegerField()
        source = serializers.CharField()
        wrong = serializers.IntegerField()
        mean_priority = serializers.FloatField()

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        from cfannotate.campaigns.priority import originals_prioritize

        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        summary = originals_prioritize(
            campaign=campaign, predictions=serializer.validated_data.get("predictions")
        )
        return Response(self.OutputSerializer(summary).data)
