from django.contrib import admin

from cfannotate.evaluation.models import Evaluation


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["id", "campaign", "kind", "source", "created_at", "created_by"]
    list_filter = ["kind", "source", "campaign"]
    raw_id_fields = ["campaign", "created_by"]
    readonly_fields = ["campaign", "kind", "source", "parameters", "result", "created_at"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request) -> bool:
        return False  # runs come from the page, the API or `manage.py evaluate`
