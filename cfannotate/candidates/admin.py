from django.contrib import admin

from cfannotate.candidates.models import Candidate


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["short_text", "generator", "control_code", "status", "fluency_full", "campaign"]
    list_filter = ["status", "source", "generator", "control_code", "campaign"]
    search_fields = ["text", "original__text", "original__external_id"]
    list_select_related = ["campaign"]
    raw_id_fields = ["campaign", "original", "intended_label"]
    readonly_fields = ["created_at", "original_text"]

    @admin.display(description="text")
    def short_text(self, obj: Candidate) -> str:
        return obj.text[:100]

    @admin.display(description="original")
    def original_text(self, obj: Candidate) -> str:
        return obj.original.text
