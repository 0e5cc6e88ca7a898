from django.urls import path

from cfannotate.candidates import views

urlpatterns = [
    path("<int:campaign_id>/generation/", views.run_progress, name="run-progress"),
    path("<int:campaign_id>/generation/start/", views.run_start, name="run-start"),
    path("<int:campaign_id>/generation/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
    path("<int:campaign_id>/generation/<int:run_id>/retry/", views.run_retry, name="run-retry"),
    path("<int:campaign_id>/candidates/import/", views.candidate_import, name="candidate-import"),
    path(
        "<int:campaign_id>/candidates/imports/<int:import_id>/",
        views.candidate_import_progress,
        name="candidate-import-progress",
    ),
    path(
        "<int:campaign_id>/candidates/imports/<int:import_id>/cancel/",
        views.candidate_import_cancel,
        name="candidate-import-cancel",
    ),
    path("<int:campaign_id>/candidates/recent/", views.candidates_recent, name="candidates-recent"),
    path("<int:campaign_id>/candidates/", views.candidate_review, name="candidate-review"),
    path("<int:campaign_id>/candidates/bulk/", views.candidates_bulk, name="candidates-bulk"),
    path(
        "<int:campaign_id>/candidates/predictions/",
        views.predictions_upload,
        name="candidate-predictions",
    ),
    path(
        "<int:campaign_id>/candidates/<int:candidate_id>/row/",
        views.candidate_row,
        name="candidate-row",
    ),
    path(
        "<int:campaign_id>/candidates/<int:candidate_id>/accept/",
        views.candidate_accept,
        name="candidate-accept",
    ),
    path(
        "<int:campaign_id>/candidates/<int:candidate_id>/reject/",
        views.candidate_reject,
        name="candidate-reject",
    ),
    path(
        "<int:campaign_id>/candidates/<int:candidate_id>/edit/",
        views.candidate_edit,
        name="candidate-edit",
    ),
]
