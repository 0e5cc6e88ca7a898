from django.contrib import admin

from cfannotate.candidates.models import (
    Candidate,
    CandidateImport,
    GenerationChunk,
    GenerationRun,
)


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


class GenerationChunkInline(admin.TabularInline):
    model = GenerationChunk
    extra = 0
    fields = [
        "index",
        "state",
        "attempts",
        "worker",
        "candidates_stored",
        "started_at",
        "finished_at",
        "error",
    ]
    readonly_fields = fields
    can_delete = False


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "campaign",
        "state",
        "chunks_done",
        "chunks_failed",
        "chunks_total",
        "candidates_stored",
        "created_at",
        "finished_at",
    ]
    list_filter = ["state", "campaign"]
    search_fields = ["campaign__name"]
    readonly_fields = [
        "chunks_total",
        "chunks_done",
        "chunks_failed",
        "candidates_stored",
        "created_at",
        "started_at",
        "finished_at",
    ]
    inlines = [GenerationChunkInline]


@admin.register(GenerationChunk)
class GenerationChunkAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "run",
        "index",
        "state",
        "attempts",
        "worker",
        "candidates_stored",
        "lease_expires_at",
    ]
    list_filter = ["state"]
    search_fields = ["worker", "error"]
    raw_id_fields = ["run"]
    readonly_fields = ["attempts", "started_at", "finished_at"]


@admin.register(CandidateImport)
class CandidateImportAdmin(admin.ModelAdmin):
    """What each import did; read only (a running one is cancelled from its campaign's page
    or the API, which keep the task and the import in step)."""

    list_display = [
        "id",
        "campaign",
        "file_name",
        "state",
        "rows_done",
        "rows_total",
        "imported",
        "created_at",
        "finished_at",
    ]
    list_filter = ["state"]
    search_fields = ["campaign__name", "file_name", "error"]
    list_select_related = ["campaign"]
    exclude = ["content"]  # the file itself: up to 20 MB, and only until the import ends

    def get_queryset(self, request):
        return super().get_queryset(request).defer("content")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
