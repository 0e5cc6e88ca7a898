from django.contrib import admin
from django.db.models import Count

from cfannotate.campaigns.models import SETTING_STAGES, Campaign, CampaignLabel, Original


class CampaignLabelInline(admin.TabularInline):
    model = CampaignLabel
    extra = 0


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "task_type", "status", "original_count", "created_at"]
    list_filter = ["task_type", "status", "created_at"]
    search_fields = ["name", "slug", "owner__username"]
    readonly_fields = ["created_at", "updated_at", "original_count"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [CampaignLabelInline]
    actions = []  # exports adds its downloads (exports/admin.py)
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "slug",
                    "owner",
                    "status",
                    "created_at",
                    "updated_at",
                    "original_count",
                ]
            },
        ),
        ("Task", {"fields": ["task_type", "text_name", "context_name", "instructions"]}),
        *((title, {"fields": list(names)}) for title, names in SETTING_STAGES),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_original_count=Count("originals"))

    @admin.display(description="originals", ordering="_original_count")
    def original_count(self, obj: Campaign) -> int:
        return getattr(obj, "_original_count", None) or obj.originals.count()


@admin.register(Original)
class OriginalAdmin(admin.ModelAdmin):
    list_display = ["external_id", "short_text", "label", "campaign", "priority"]
    list_filter = ["campaign", "label__value"]
    search_fields = ["external_id", "text", "context"]
    list_select_related = ["label", "campaign"]
    raw_id_fields = ["campaign", "label"]
    readonly_fields = ["created_at"]

    @admin.display(description="text")
    def short_text(self, obj: Original) -> str:
        return obj.text[:100]
