from django.urls import path

from cfannotate.candidates import views

urlpatterns = [
    path("<int:campaign_id>/generation/", views.run_progress, name="run-progress"),
    path("<int:campaign_id>/generation/start/", views.run_start, name="run-start"),
    path("<int:campaign_id>/generation/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
    path("<int:campaign_id>/generation/<int:run_id>/retry/", views.run_retry, name="run-retry"),
    path("<int:campaign_id>/candidates/import/", views.candidate_import, name="candidate-import"),
]
