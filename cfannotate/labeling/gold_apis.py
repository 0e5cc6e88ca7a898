"""REST API of gold and training rounds: list them with their answers, author or promote one,
import many from a JSONL file, switch one on or off, change its answers while no worker
has had it. Owner-scoped."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core import tabular
from cfannotate.core.api_input import BodySerializer
from cfannotate.core.api_lists import choice_param, paginated_response
from cfannotate.core.exceptions import InvalidInput, NotFound
from cfannotate.core.pagination import PageNumbers
from cfannotate.core.upload_handlers import OneFileField
from cfannotate.labeling import gold
from cfannotate.labeling.models import GoldKind
from cfannotate.labeling.promotion import candidates_promote_to_gold
from cfannotate.labeling.selectors import gold_rounds_of


class GoldItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField()
    candidate = serializers.IntegerField(source="candidate_id")
    text = serializers.CharField(source="candidate.text")
    expected_valid = serializers.BooleanField()
    expected_label = serializers.CharField(source="expected_label.value")
    explanation = serializers.CharField()


@extend_schema_serializer(component_name="GoldRound")
class GoldRoundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    is_active = serializers.BooleanField()
    original = serializers.IntegerField(source="original_id")
    original_external_id = serializers.CharField(source="original.external_id")
    original_text = serializers.CharField(source="original.text")
    times_given = serializers.IntegerField(
        help_text="Rounds of assignments that gave it to a worker; answers are fixed after one."
    )
    items = GoldItemSerializer(many=True)
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="GoldItemInput")
class GoldItemInputSerializer(BodySerializer):
    """A typed counterfactual (`text`) or one of the original's candidates (`candidate_id`)."""

    text = serializers.CharField(required=False, max_length=20_000)
    candidate_id = serializers.IntegerField(required=False, min_value=1)
    valid = serializers.BooleanField(default=True)
    label = serializers.CharField(max_length=100)
    explanation = serializers.CharField(required=False, allow_blank=True, max_length=20_000)

    def validate(self, attrs):
        if ("text" in attrs) == ("candidate_id" in attrs):
            raise serializers.ValidationError("Give either text or candidate_id.")
        return attrs


@extend_schema_serializer(component_name="GoldAnswerInput")
class GoldAnswerInputSerializer(BodySerializer):
    id = serializers.IntegerField(min_value=1, help_text="The gold item's id.")
    valid = serializers.BooleanField(default=True)
    label = serializers.CharField(max_length=100)
    explanation = serializers.CharField(required=False, allow_blank=True, max_length=20_000)


def _round_out(campaign, gold_round_id: int) -> dict:
    return GoldRoundSerializer(gold_rounds_of(campaign).get(pk=gold_round_id)).data


def _round_of(campaign, gold_round_id: int):
    gold_round = campaign.gold_rounds.filter(pk=gold_round_id).first()
    if gold_round is None:
        raise NotFound(f"No gold round {gold_round_id} in this campaign.")
    return gold_round


class GoldRoundListApi(APIView):
    """GET: the rounds with their expected answers. POST: a new round, either typed
    (`items[].text`) or promoted from the original's candidates (`items[].candidate_id`)."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema_serializer(component_name="GoldRoundInput")
    class InputSerializer(BodySerializer):
        original = serializers.IntegerField(min_value=1, help_text="The original's id.")
        kind = serializers.ChoiceField(choices=GoldKind.choices, default=GoldKind.GOLD)
        items = GoldItemInputSerializer(many=True, min_length=1, max_length=gold.MAX_ITEMS)

        def validate_items(self, items):
            if len({"text" in item for item in items}) > 1:
                raise serializers.ValidationError(
                    "Either every item has a text (authored) or every one a candidate_id "
                    "(promoted)."
                )
            return items

    @extend_schema(
        parameters=[OpenApiParameter("kind", enum=GoldKind.values, required=False)],
        responses=GoldRoundSerializer(many=True),
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        kind = choice_param(request, "kind", GoldKind.values)
        return paginated_response(
            self, request, gold_rounds_of(campaign, kind=kind), GoldRoundSerializer
        )

    @extend_schema(request=InputSerializer, responses={201: GoldRoundSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        original = campaign.originals.filter(pk=data["original"]).first()
        if original is None:
            raise InvalidInput(
                f"No original {data['original']} in this campaign.",
                fields={"original": ["Unknown."]},
            )
        if "candidate_id" in data["items"][0]:
            gold_round = candidates_promote_to_gold(
                campaign=campaign, original=original, kind=data["kind"], items=data["items"]
            )
        else:
            gold_round = gold.gold_round_author(
                campaign=campaign, original=original, kind=data["kind"], items=data["items"]
            )
        return Response(_round_out(campaign, gold_round.pk), status=status.HTTP_201_CREATED)


class GoldRoundImportApi(APIView):
    """POST a JSONL file of rounds, one a line, as `manage.py import_gold` reads it; all
    lines or none (a 400 names each bad line)."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="GoldImportInput")
    class InputSerializer(BodySerializer):
        file = OneFileField(
            help_text='JSONL: {"original_id", "kind": "gold"|"training", "items": [{"text", '
            '"valid", "label", "explanation"}]} a line.'
        )

    @extend_schema_serializer(component_name="GoldImportOutput")
    class OutputSerializer(serializers.Serializer):
        imported = serializers.IntegerField(help_text="Rounds made.")

    @extend_schema(
        request={"multipart/form-data": InputSerializer}, responses={201: OutputSerializer}
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        made = gold.gold_rounds_upload(
            campaign=self.campaign,
            file_name=upload.name,
            content=tabular.upload_bytes(upload, max_bytes=gold.MAX_UPLOAD_BYTES),
        )
        return Response({"imported": made}, status=status.HTTP_201_CREATED)


class GoldRoundDetailApi(APIView):
    """GET one round; PATCH `is_active` and/or the items' answers (while no worker had it)."""

    @extend_schema_serializer(component_name="GoldRoundUpdateInput")
    class InputSerializer(BodySerializer):
        is_active = serializers.BooleanField(required=False)
        items = GoldAnswerInputSerializer(
            many=True, required=False, min_length=1, max_length=gold.MAX_ITEMS
        )

        def validate(self, attrs):
            if not attrs:
                raise serializers.ValidationError({"is_active": ["Give is_active or items."]})
            return attrs

    @extend_schema(responses=GoldRoundSerializer)
    def get(self, request: Request, campaign_id: int, gold_round_id: int) -> Response:
        campaign = self.campaign
        return Response(_round_out(campaign, _round_of(campaign, gold_round_id).pk))

    @extend_schema(request=InputSerializer, responses=GoldRoundSerializer)
    def patch(self, request: Request, campaign_id: int, gold_round_id: int) -> Response:
        campaign = self.campaign
        gold_round = _round_of(campaign, gold_round_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gold.gold_round_update(gold_round=gold_round, **serializer.validated_data)
        return Response(_round_out(campaign, gold_round.pk))
