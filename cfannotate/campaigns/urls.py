from django.urls import path

from cfannotate.campaigns import views

urlpatterns = [
    path("<int:campaign_id>/", views.campaign_detail, name="campaign-detail"),
]
