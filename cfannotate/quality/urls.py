from django.urls import path

from cfannotate.quality import views

urlpatterns = [
    path("<int:campaign_id>/quality/", views.quality_page, name="quality-page"),
    path(
        "<int:campaign_id>/quality/report/",
        views.quality_report_fragment,
        name="quality-report",
    ),
    path(
        "<int:campaign_id>/quality/refresh/",
        views.quality_refresh_view,
        name="quality-refresh",
    ),
    path(
        "<int:campaign_id>/quality/decisions/",
        views.decisions_fragment,
        name="quality-decisions",
    ),
    path(
        "<int:campaign_id>/quality/decisions/<int:decision_id>/",
        views.decision_update_view,
        name="quality-decision-update",
    ),
    path(
        "<int:campaign_id>/quality/decisions/confirm/",
        views.decisions_confirm_view,
        name="quality-decisions-confirm",
    ),
    path(
        "<int:campaign_id>/quality/decisions/apply/",
        views.decisions_apply_view,
        name="quality-decisions-apply",
    ),
]
