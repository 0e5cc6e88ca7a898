"""The gold rounds page of a campaign (researcher-only), under campaigns/<id>/gold/; a new
round on one original is also where the review page's "Promote to gold" leads."""

from django.urls import path

from cfannotate.labeling import gold_views

urlpatterns = [
    path("<int:campaign_id>/gold/", gold_views.gold_page, name="gold-page"),
    path("<int:campaign_id>/gold/import/", gold_views.gold_import, name="gold-import"),
    path(
        "<int:campaign_id>/gold/originals/<int:original_id>/",
        gold_views.gold_original,
        name="gold-original",
    ),
    path(
        "<int:campaign_id>/gold/<int:gold_round_id>/active/",
        gold_views.gold_round_active,
        name="gold-round-active",
    ),
    path(
        "<int:campaign_id>/gold/<int:gold_round_id>/answers/",
        gold_views.gold_round_answers,
        name="gold-round-answers",
    ),
]
