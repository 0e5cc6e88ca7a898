from django.contrib import admin
from django.db.models import Count

from cfannotate.crowd.models import Worker


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "platform", "status", "assignment_count", "created_at"]
    list_filter = ["platform", "status"]
    search_fields = ["external_id"]
    readonly_fields = ["created_at", "assignment_count"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_assignment_count=Count("assignments"))

    @admin.display(description="assignments", ordering="_assignment_count")
    def assignment_count(self, obj: Worker) -> int:
        return getattr(obj, "_assignment_count", None) or obj.assignments.count()
