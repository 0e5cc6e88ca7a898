from django.urls import path

from cfannotate.labeling import campaign_views

urlpatterns = [
    path("<int:campaign_id>/labeling/", campaign_views.labeling_block, name="labeling-block"),
    path(
        "<int:campaign_id>/labeling/open/",
        campaign_views.labeling_open_view,
        name="labeling-open",
    ),
    path(
        "<int:campaign_id>/labeling/pause/",
        campaign_views.labeling_pause_view,
        name="labeling-pause",
    ),
    path(
        "<int:campaign_id>/labeling/order/",
        campaign_views.labeling_order_view,
        name="labeling-order",
    ),
    path(
        "<int:campaign_id>/labeling/priority/",
        campaign_views.labeling_priority_view,
        name="labeling-priority",
    ),
]
