from django.contrib import admin, messages

from cfannotate.core.text import counted
from cfannotate.quality.decisions import decision_apply
from cfannotate.quality.models import (
    AggregatedLabel,
    DecisionState,
    WorkerDecision,
    WorkerQuality,
)


@admin.register(AggregatedLabel)
class AggregatedLabelAdmin(admin.ModelAdmin):
    list_display = [
        "candidate",
        "label",
        "is_valid",
        "kept",
        "votes",
        "qualified_votes",
        "agreement",
        "needs_more",
        "ds_label",
        "ds_confidence",
    ]
    list_filter = ["kept", "is_valid", "needs_more", "candidate__campaign"]
    search_fields = ["candidate__text"]
    raw_id_fields = ["candidate", "label", "ds_label"]
    readonly_fields = ["updated_at"]


@admin.register(WorkerQuality)
class WorkerQualityAdmin(admin.ModelAdmin):
    list_display = [
        "worker",
        "campaign",
        "qualified",
        "settled",
        "rounds",
        "median_seconds",
        "gold_correct",
        "gold_total",
        "distribution_distance",
    ]
    list_filter = ["qualified", "settled", "campaign"]
    search_fields = ["worker__external_id"]
    raw_id_fields = ["worker", "campaign"]
    readonly_fields = ["updated_at"]


@admin.register(WorkerDecision)
class WorkerDecisionAdmin(admin.ModelAdmin):
    list_display = ["worker", "campaign", "assignment", "action", "amount", "state", "reason"]
    list_filter = ["state", "action", "proposed_by_filters", "campaign"]
    search_fields = ["worker__external_id", "reason"]
    raw_id_fields = ["worker", "campaign", "assignment", "decided_by"]
    readonly_fields = ["created_at", "updated_at", "applied_at", "error"]
    actions = ["confirm", "send"]

    @admin.action(description="Confirm the selected decisions")
    def confirm(self, request, queryset):
        count = queryset.filter(state=DecisionState.PROPOSED).update(
            state=DecisionState.CONFIRMED, decided_by=request.user, proposed_by_filters=False
        )
        self.message_user(request, f"{counted(count, 'decision')} confirmed.")

    @admin.action(description="Send the selected confirmed decisions to the platforms")
    def send(self, request, queryset):
        sent = failed = 0
        for decision in queryset.filter(state__in=[DecisionState.CONFIRMED, DecisionState.FAILED]):
            outcome = decision_apply(decision=decision)
            sent += outcome.state == DecisionState.APPLIED
            failed += outcome.state == DecisionState.FAILED
        level = messages.WARNING if failed else messages.SUCCESS
        self.message_user(request, f"{sent} sent, {failed} refused by the platform.", level)
