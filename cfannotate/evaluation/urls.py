"""The campaign page's evaluation section, under campaigns/."""

from django.urls import path

from cfannotate.evaluation import views

urlpatterns = [
    path("<int:campaign_id>/evaluation/", views.evaluation_fragment, name="evaluation-fragment"),
    path("<int:campaign_id>/evaluation/run/", views.evaluation_run_view, name="evaluation-run"),
]
