"""REST API of a campaign's crowd platforms: publish on MTurk or Prolific, invitation and
personal links, status sync, and review decisions (approve, reject, bonus, block).

Each operation calls the service the campaign page's crowd block calls, so it applies the
same checks (the platforms' option rules, the campaign's state, the decision already in
place); the campaign is the requesting researcher's own or a 404. A researcher's block
keeps the worker out of their own campaigns (or this one) only, as on the page.
"""

from functools import partial

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core.api_input import BodySerializer
from cfannotate.core.api_lists import paginated_response
from cfannotate.core.exceptions import NotFound
from cfannotate.core.pagination import PageNumbers
from cfannotate.core.worker_tokens import link_token, personal_link_token
from cfannotate.crowd import review
from cfannotate.crowd.models import BlockScope, InvitationLink, PersonalLink
from cfannotate.crowd.places import publication_places_add, publication_places_cap_set
from cfannotate.crowd.providers import public_base_url
from cfannotate.crowd.providers.mturk import MTurkOptions
from cfannotate.crowd.providers.prolific import ProlificOptions
from cfannotate.crowd.publishing import (
    entry_url,
    mturk_publish,
    platform_sync,
    prolific_study_create,
)
from cfannotate.crowd.selectors import (
    PLACES_CAP,
    assignment_of,
    links_of,
    personal_links_of,
    publication_of,
    publications_of,
    worker_of,
)
from cfannotate.crowd.services import (
    MAX_PERSONAL_LINK_DAYS,
    PERSONAL_LINK_DAYS,
    invitation_link_close,
    invitation_link_create,
    personal_link_create,
    personal_link_revoke,
)
from cfannotate.labeling.models import Assignment

# --- Output ------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="Publication")
class PublicationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    platform = serializers.CharField()
    sandbox = serializers.BooleanField()
    external_id = serializers.CharField(help_text="MTurk's HIT type id or Prolific's study id.")
    status = serializers.CharField(help_text="The platform's own word.")
    hits = serializers.SerializerMethodField(help_text="MTurk HIT ids (empty on Prolific).")
    entry_url = serializers.SerializerMethodField(help_text="Where the platform sends workers.")
    places = serializers.SerializerMethodField(
        help_text="Prolific: the workers the study lets in, in all (null elsewhere)."
    )
    places_up_to = serializers.SerializerMethodField(
        help_text="Prolific: the places the study grows to by itself as the units need them "
        "(null: only when added by hand)."
    )
    created_at = serializers.DateTimeField()

    def get_hits(self, publication) -> list[str]:
        return [hit.hit_id for hit in publication.hits.all()]

    def get_places(self, publication) -> int | None:
        return publication.options.get("places") if publication.platform == "prolific" else None

    def get_places_up_to(self, publication) -> int | None:
        return publication.options.get(PLACES_CAP)

    def get_entry_url(self, publication) -> str:
        return entry_url(publication=publication, base_url=self.context["base_url"])


@extend_schema_serializer(component_name="InvitationLink")
class InvitationLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    quota = serializers.IntegerField(allow_null=True, help_text="null: no limit.")
    uses = serializers.IntegerField(help_text="Assignments started through it.")
    is_active = serializers.BooleanField()
    url = serializers.SerializerMethodField(help_text="The link to send to workers.")
    created_at = serializers.DateTimeField()

    def get_url(self, link) -> str:
        return self.context["base_url"] + _path("join-link", link_token(link.id))


@extend_schema_serializer(component_name="PersonalLink")
class PersonalLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    worker = serializers.CharField(source="worker.external_id")
    expires_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField(
        help_text="Send it to this worker only; null once revoked."
    )
    created_at = serializers.DateTimeField()

    def get_url(self, link) -> str | None:
        if link.revoked_at is not None:
            return None
        token = personal_link_token(
            link_id=link.id, worker=link.worker.external_id, expires_at=link.expires_at
        )
        return self.context["base_url"] + _path("join-personal", token)


@extend_schema_serializer(component_name="ReviewOutcome")
class ReviewOutcomeSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(source="id")
    worker = serializers.CharField(source="worker.external_id")
    decision = serializers.SerializerMethodField(help_text="approved, rejected or null.")

    def get_decision(self, assignment) -> str | None:
        found = getattr(assignment, "review", None)
        return found.decision if found is not None else None


def _path(name: str, token: str) -> str:
    return reverse(name, kwargs={"token": token})


def _context(request: Request) -> dict:
    return {"base_url": public_base_url(request)}


def _reviewed(assignment: Assignment) -> dict:
    fresh = Assignment.objects.select_related("worker", "review").get(pk=assignment.pk)
    return ReviewOutcomeSerializer(fresh).data


# --- Publishing --------------------------------------------------------------------------------


class PublicationListApi(APIView):
    """The campaign's MTurk HIT types and Prolific studies, newest first."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema(responses=PublicationSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer_class = partial(PublicationSerializer, context=_context(request))
        return paginated_response(self, request, publications_of(campaign), serializer_class)


class MTurkPublishApi(APIView):
    """A HIT type and HITs framing the campaign's entry URL (sandbox unless `sandbox` is
    false). 409 unless the campaign is open for labeling; 400 without an https address."""

    @extend_schema_serializer(component_name="MTurkPublishInput")
    class InputSerializer(BodySerializer):
        title = serializers.CharField(max_length=128)
        description = serializers.CharField(max_length=2000)
        keywords = serializers.CharField(
            max_length=1000, required=False, allow_blank=True, default=MTurkOptions.keywords
        )
        reward = serializers.DecimalField(
            max_digits=6, decimal_places=2, help_text="USD per assignment, e.g. 2.50."
        )
        assignments = serializers.IntegerField(help_text="In all, over every HIT.")
        assignments_per_hit = serializers.IntegerField(default=MTurkOptions.assignments_per_hit)
        assignment_minutes = serializers.IntegerField(default=MTurkOptions.assignment_minutes)
        auto_approve_days = serializers.IntegerField(default=MTurkOptions.auto_approve_days)
        lifetime_days = serializers.IntegerField(default=MTurkOptions.lifetime_days)
        frame_height = serializers.IntegerField(default=MTurkOptions.frame_height)
        sandbox = serializers.BooleanField(default=MTurkOptions.sandbox)
        locale = serializers.CharField(
            max_length=2, required=False, allow_blank=True, default=MTurkOptions.locale
        )
        min_approval_percent = serializers.IntegerField(
            allow_null=True, default=MTurkOptions.min_approval_percent
        )
        min_approved_hits = serializers.IntegerField(
            allow_null=True, default=MTurkOptions.min_approved_hits
        )

    @extend_schema(request=InputSerializer, responses={201: PublicationSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        options = MTurkOptions(**{**data, "locale": data["locale"].upper()})
        publication = mturk_publish(
            campaign=campaign,
            options=options,
            base_url=public_base_url(request),
            actor=request.user,
        )
        out = PublicationSerializer(publication, context=_context(request)).data
        return Response(out, status=status.HTTP_201_CREATED)


class ProlificStudyApi(APIView):
    """A draft Prolific study with the campaign's entry URL; review, fund and publish it on
    Prolific. 409 unless the campaign is open for labeling."""

    @extend_schema_serializer(component_name="ProlificStudyInput")
    class InputSerializer(BodySerializer):
        name = serializers.CharField(max_length=120)
        description = serializers.CharField(max_length=5000)
        places = serializers.IntegerField()
        reward_cents = serializers.IntegerField(help_text="Per participant, cents or pence.")
        minutes = serializers.IntegerField(help_text="Estimated completion time.")

    @extend_schema(request=InputSerializer, responses={201: PublicationSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        publication = prolific_study_create(
            campaign=campaign,
            options=ProlificOptions(**serializer.validated_data),
            base_url=public_base_url(request),
            actor=request.user,
        )
        out = PublicationSerializer(publication, context=_context(request)).data
        return Response(out, status=status.HTTP_201_CREATED)


class PublicationPlacesApi(APIView):
    """Let more workers take a Prolific study, published or not, when re-queues and
    replaced rounds need more assignments than it was made for (the campaign page says
    how many). 409 for other platforms or a publication never created on Prolific."""

    @extend_schema_serializer(component_name="PublicationPlacesInput")
    class InputSerializer(BodySerializer):
        places = serializers.IntegerField(help_text="Places to add (1 to 100000).")

    @extend_schema(request=InputSerializer, responses=PublicationSerializer)
    def post(self, request: Request, campaign_id: int, publication_id: int) -> Response:
        publication = publication_of(self.campaign, publication_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        publication_places_add(publication=publication, places=serializer.validated_data["places"])
        return Response(PublicationSerializer(publication, context=_context(request)).data)


class PublicationPlacesCapApi(APIView):
    """Let a Prolific study take more places by itself as re-queues and replaced rounds
    need them, up to `up_to` places in all (the labeling sweep adds them); null stops it.
    Every place is paid for: the cap is the most the study will cost."""

    @extend_schema_serializer(component_name="PublicationPlacesCapInput")
    class InputSerializer(BodySerializer):
        up_to = serializers.IntegerField(
            allow_null=True, help_text="The most places in all (from the study's places to 100000)."
        )

    @extend_schema(request=InputSerializer, responses=PublicationSerializer)
    def post(self, request: Request, campaign_id: int, publication_id: int) -> Response:
        publication = publication_of(self.campaign, publication_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        publication_places_cap_set(
            publication=publication, up_to=serializer.validated_data["up_to"]
        )
        return Response(PublicationSerializer(publication, context=_context(request)).data)


class PlatformSyncApi(APIView):
    """Bring every publication in line with its platform; free abandoned assignments."""

    @extend_schema_serializer(component_name="PlatformSyncOutput")
    class OutputSerializer(serializers.Serializer):
        checked = serializers.IntegerField()
        updated = serializers.IntegerField()
        freed = serializers.IntegerField(help_text="Assignments whose units went back.")
        reviews = serializers.IntegerField(help_text="Platform decisions recorded.")
        problems = serializers.ListField(child=serializers.CharField())
        summary = serializers.CharField()

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        report = platform_sync(campaign=campaign)
        return Response(self.OutputSerializer({**vars(report), "summary": report.summary()}).data)


# --- Links -------------------------------------------------------------------------------------


class InvitationLinkListApi(APIView):
    """GET: the campaign's named invitation links. POST: a new one, with a quota or not."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema_serializer(component_name="InvitationLinkInput")
    class InputSerializer(BodySerializer):
        name = serializers.CharField(max_length=120, help_text="Who it is for.")
        quota = serializers.IntegerField(
            required=False, allow_null=True, help_text="Assignments it may start; null: no limit."
        )

    @extend_schema(responses=InvitationLinkSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer_class = partial(InvitationLinkSerializer, context=_context(request))
        return paginated_response(self, request, links_of(campaign), serializer_class)

    @extend_schema(request=InputSerializer, responses={201: InvitationLinkSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        link = invitation_link_create(
            campaign=campaign,
            name=serializer.validated_data["name"],
            quota=serializer.validated_data.get("quota"),
        )
        out = InvitationLinkSerializer(link, context=_context(request)).data
        return Response(out, status=status.HTTP_201_CREATED)


class InvitationLinkCloseApi(APIView):
    """No new assignments through the link; those it started can be finished."""

    @extend_schema(request=None, responses=InvitationLinkSerializer)
    def post(self, request: Request, campaign_id: int, link_id: int) -> Response:
        campaign = self.campaign
        link = InvitationLink.objects.filter(pk=link_id, campaign=campaign).first()
        if link is None:
            raise NotFound(f"No invitation link {link_id} in this campaign.")
        invitation_link_close(link=link)
        return Response(InvitationLinkSerializer(link, context=_context(request)).data)


class PersonalLinkListApi(APIView):
    """GET: the campaign's personal links. POST: one for a named worker (it replaces their
    live one); its `url` opens their work, so send it to them only."""

    pagination_class = PageNumbers  # also tells the schema the list is paginated

    @extend_schema_serializer(component_name="PersonalLinkInput")
    class InputSerializer(BodySerializer):
        worker = serializers.CharField(
            max_length=120, help_text="Their name or id; it labels their judgments."
        )
        days = serializers.IntegerField(
            default=PERSONAL_LINK_DAYS, help_text=f"1 to {MAX_PERSONAL_LINK_DAYS}."
        )

    @extend_schema(responses=PersonalLinkSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer_class = partial(PersonalLinkSerializer, context=_context(request))
        return paginated_response(self, request, personal_links_of(campaign), serializer_class)

    @extend_schema(request=InputSerializer, responses={201: PersonalLinkSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        link = personal_link_create(
            campaign=campaign,
            worker_name=serializer.validated_data["worker"],
            days=serializer.validated_data["days"],
            created_by=request.user,
        )
        out = PersonalLinkSerializer(link, context=_context(request)).data
        return Response(out, status=status.HTTP_201_CREATED)


class PersonalLinkRevokeApi(APIView):
    """The link and the task pages it opened stop working; the worker's assignment stays
    theirs (a new personal link resumes it)."""

    @extend_schema(request=None, responses=PersonalLinkSerializer)
    def post(self, request: Request, campaign_id: int, link_id: int) -> Response:
        campaign = self.campaign
        link = PersonalLink.objects.select_related("worker").filter(pk=link_id, campaign=campaign)
        link = link.first()
        if link is None:
            raise NotFound(f"No personal link {link_id} in this campaign.")
        personal_link_revoke(link=link)
        return Response(PersonalLinkSerializer(link, context=_context(request)).data)


# --- Review decisions --------------------------------------------------------------------------


class AssignmentApproveApi(APIView):
    """Approve a submitted assignment on its platform (recorded here for link workers)."""

    @extend_schema_serializer(component_name="ApproveInput")
    class InputSerializer(BodySerializer):
        feedback = serializers.CharField(
            max_length=review.MAX_MESSAGE, required=False, allow_blank=True, default=""
        )

    @extend_schema(request=InputSerializer, responses=ReviewOutcomeSerializer)
    def post(self, request: Request, campaign_id: int, assignment_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = assignment_of(campaign, assignment_id)
        review.assignment_approve(
            assignment=assignment, feedback=serializer.validated_data["feedback"]
        )
        return Response(_reviewed(assignment))


class AssignmentRejectApi(APIView):
    """Reject a submitted assignment, saying why (the worker reads it)."""

    @extend_schema_serializer(component_name="RejectInput")
    class InputSerializer(BodySerializer):
        feedback = serializers.CharField(max_length=review.MAX_MESSAGE)

    @extend_schema(request=InputSerializer, responses=ReviewOutcomeSerializer)
    def post(self, request: Request, campaign_id: int, assignment_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = assignment_of(campaign, assignment_id)
        review.assignment_reject(
            assignment=assignment, feedback=serializer.validated_data["feedback"]
        )
        return Response(_reviewed(assignment))


class WorkerBonusApi(APIView):
    """Pay a bonus on an assignment; the same `unique_token` again pays nothing more."""

    @extend_schema_serializer(component_name="BonusInput")
    class InputSerializer(BodySerializer):
        amount = serializers.DecimalField(max_digits=8, decimal_places=2)
        reason = serializers.CharField(max_length=review.MAX_MESSAGE)
        unique_token = serializers.CharField(
            max_length=review.MAX_TOKEN, help_text="Yours to choose; makes a retry safe."
        )

    @extend_schema(request=InputSerializer, responses=ReviewOutcomeSerializer)
    def post(self, request: Request, campaign_id: int, assignment_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = assignment_of(campaign, assignment_id)
        review.worker_bonus(assignment=assignment, **serializer.validated_data)
        return Response(_reviewed(assignment))


class WorkerBlockApi(APIView):
    """Keep a worker of this campaign out of all your campaigns (`researcher`) or this one
    (`campaign`). Nothing is sent to the platform: blocking everywhere is an
    administrator's action."""

    @extend_schema_serializer(component_name="BlockInput")
    class InputSerializer(BodySerializer):
        reason = serializers.CharField(max_length=review.MAX_MESSAGE)
        scope = serializers.ChoiceField(
            choices=[BlockScope.RESEARCHER, BlockScope.CAMPAIGN], default=BlockScope.RESEARCHER
        )

    @extend_schema_serializer(component_name="BlockOutput")
    class OutputSerializer(serializers.Serializer):
        worker = serializers.IntegerField()
        external_id = serializers.CharField()
        scope = serializers.CharField()

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, campaign_id: int, worker_id: int) -> Response:
        campaign = self.campaign
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        worker = worker_of(campaign, worker_id)
        scope = serializer.validated_data["scope"]
        review.worker_block(
            worker=worker,
            reason=serializer.validated_data["reason"],
            scope=scope,
            campaign=campaign,
            by=request.user,
        )
        out = {"worker": worker.pk, "external_id": worker.external_id, "scope": scope}
        return Response(self.OutputSerializer(out).data)
