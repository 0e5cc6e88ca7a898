from django.contrib import admin

from cfannotate.quality.models import AggregatedLabel


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
        "method",
    ]
    list_filter = ["kept", "is_valid", "method", "candidate__campaign"]
    search_fields = ["candidate__text"]
    raw_id_fields = ["candidate", "label"]
    readonly_fields = ["updated_at"]
