from django.contrib import admin

from cfannotate.labeling.models import (
    Assignment,
    GoldItem,
    GoldRound,
    Judgment,
    LabelingUnit,
    Round,
    UnitItem,
)


class UnitItemInline(admin.TabularInline):
    model = UnitItem
    extra = 0
    raw_id_fields = ["candidate"]


@admin.register(LabelingUnit)
class LabelingUnitAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "original",
        "campaign",
        "claims",
        "completed",
        "judgments_needed",
        "priority",
        "is_open",
    ]
    list_filter = ["campaign"]
    search_fields = ["original__text", "original__external_id"]
    raw_id_fields = ["campaign", "original"]
    readonly_fields = ["created_at", "claims", "completed"]
    inlines = [UnitItemInline]

    @admin.display(boolean=True, description="open")
    def is_open(self, obj: LabelingUnit) -> bool:
        return obj.claims < obj.judgments_needed


class GoldItemInline(admin.TabularInline):
    model = GoldItem
    extra = 0
    raw_id_fields = ["candidate", "expected_label"]


@admin.register(GoldRound)
class GoldRoundAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "original", "campaign", "is_active"]
    list_filter = ["kind", "is_active", "campaign"]
    search_fields = ["original__text"]
    raw_id_fields = ["campaign", "original"]
    inlines = [GoldItemInline]


class RoundInline(admin.TabularInline):
    model = Round
    extra = 0
    fields = ["position", "kind", "unit", "gold_round", "served_at", "submitted_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "worker",
        "campaign",
        "state",
        "lease_expires_at",
        "created_at",
        "submitted_at",
    ]
    list_filter = ["state", "campaign", "worker__platform"]
    search_fields = ["worker__external_id", "platform_assignment_id", "platform_task_id"]
    raw_id_fields = ["campaign", "worker"]
    readonly_fields = ["token_nonce", "created_at", "last_seen_at", "submitted_at"]
    inlines = [RoundInline]


class JudgmentInline(admin.TabularInline):
    model = Judgment
    extra = 0
    fields = ["candidate", "is_valid", "label", "updated_at"]
    readonly_fields = fields
    can_delete = False


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment", "position", "kind", "served_at", "submitted_at", "seconds"]
    list_filter = ["kind", "assignment__campaign"]
    raw_id_fields = ["assignment", "worker", "unit", "gold_round"]
    readonly_fields = ["served_at", "submitted_at", "seconds"]
    inlines = [JudgmentInline]

    @admin.display(description="seconds")
    def seconds(self, obj: Round) -> str:
        taken = obj.seconds_taken
        return "" if taken is None else f"{taken:.1f}"


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["id", "candidate", "is_valid", "label", "round", "updated_at"]
    list_filter = ["is_valid", "round__kind", "round__assignment__campaign"]
    search_fields = ["candidate__text", "round__worker__external_id"]
    raw_id_fields = ["round", "candidate", "label"]
    readonly_fields = ["updated_at"]
