from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "cfannotate.campaigns"
    verbose_name = "Campaigns"
