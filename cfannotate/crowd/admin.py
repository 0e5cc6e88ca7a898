from django.contrib import admin, messages
from django.db.models import Count

from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.crowd.models import (
    AssignmentReview,
    BlockScope,
    InvitationLink,
    MTurkHit,
    PersonalLink,
    PlatformAction,
    Publication,
    Worker,
    WorkerBlock,
    WorkerStatus,
)
from cfannotate.crowd.review import worker_block
from cfannotate.crowd.services import personal_link_revoke


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "platform", "status", "assignment_count", "created_at"]
    list_filter = ["platform", "status"]
    search_fields = ["external_id"]
    readonly_fields = ["created_at", "assignment_count"]
    actions = ["block_workers"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_assignment_count=Count("assignments"))

    @admin.display(description="assignments", ordering="_assignment_count")
    def assignment_count(self, obj: Worker) -> int:
        return getattr(obj, "_assignment_count", None) or obj.assignments.count()

    @admin.action(
        description="Block everywhere (administrator): every researcher's campaigns and "
        "the platform"
    )
    def block_workers(self, request, queryset):
        for worker in queryset.exclude(status=WorkerStatus.BLOCKED):
            try:
                worker_block(
                    worker=worker,
                    reason=f"Blocked by {request.user.get_username()}.",
                    scope=BlockScope.EVERYWHERE,
                    by=request.user,
                )
            except CfannotateError as error:
                self.message_user(request, f"{worker}: {error.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"Blocked {worker} everywhere: in every researcher's campaigns and on "
                    "their platform.",
                    messages.SUCCESS,
                )


@admin.register(WorkerBlock)
class WorkerBlockAdmin(admin.ModelAdmin):
    """Researchers' blocks (their campaigns, or one); blocks everywhere are on the worker."""

    list_display = ["worker", "scope", "researcher", "campaign", "reason", "created_at"]
    list_filter = ["scope"]
    search_fields = ["worker__external_id", "reason"]
    raw_id_fields = ["worker", "researcher", "campaign", "created_by"]
    readonly_fields = ["created_at"]


@admin.register(PersonalLink)
class PersonalLinkAdmin(admin.ModelAdmin):
    list_display = ["worker", "campaign", "expires_at", "revoked_at", "created_at"]
    search_fields = ["worker__external_id", "campaign__name"]
    raw_id_fields = ["worker", "campaign", "created_by"]
    # Revoking also rotates the worker pages' token: only the action does both.
    readonly_fields = ["revoked_at", "created_at"]
    actions = ["revoke_links"]

    @admin.action(description="Revoke (the link and the worker pages it opened stop working)")
    def revoke_links(self, request, queryset):
        revoked = sum(personal_link_revoke(link=link) for link in queryset)
        said = f"Revoked {counted(revoked, 'personal link')}."
        self.message_user(request, said, messages.SUCCESS)


class MTurkHitInline(admin.TabularInline):
    model = MTurkHit
    extra = 0
    can_delete = False
    readonly_fields = [
        "hit_id",
        "max_assignments",
        "status",
        "assignments_available",
        "assignments_pending",
        "assignments_completed",
        "expires_at",
        "synced_at",
    ]


@admin.register(Publication)
class PublicationAdmin(admin.ModelAdmin):
    list_display = ["id", "campaign", "platform", "sandbox", "external_id", "status", "created_at"]
    list_filter = ["platform", "sandbox", "status"]
    search_fields = ["external_id", "campaign__name"]
    raw_id_fields = ["campaign", "created_by"]
    readonly_fields = ["external_id", "completion_code", "created_at", "synced_at"]
    inlines = [MTurkHitInline]


@admin.register(MTurkHit)
class MTurkHitAdmin(admin.ModelAdmin):
    list_display = ["hit_id", "publication", "status", "assignments_completed", "max_assignments"]
    list_filter = ["status"]
    search_fields = ["hit_id"]
    raw_id_fields = ["publication"]
    readonly_fields = MTurkHitInline.readonly_fields


@admin.register(InvitationLink)
class InvitationLinkAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign", "uses", "quota", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "campaign__name"]
    raw_id_fields = ["campaign"]
    readonly_fields = ["uses", "created_at"]


@admin.register(AssignmentReview)
class AssignmentReviewAdmin(admin.ModelAdmin):
    list_display = ["assignment", "decision", "decided_at"]
    list_filter = ["decision"]
    raw_id_fields = ["assignment"]


@admin.register(PlatformAction)
class PlatformActionAdmin(admin.ModelAdmin):
    """The log is written by the review services only: read it here, never edit it."""

    list_display = ["created_at", "platform", "action", "outcome", "worker", "assignment", "amount"]
    list_filter = ["platform", "action", "outcome"]
    search_fields = ["request_token", "request_id", "worker__external_id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
