"""`manage.py crowd_link CAMPAIGN --name NAME [--quota N]`: an invitation link for annotators."""

from django.core.management.base import BaseCommand
from django.urls import reverse

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd.management.helpers import base_url_or_error, campaign_or_error, command_error
from cfannotate.crowd.services import invitation_link_create
from cfannotate.crowd.tokens import link_token


class Command(BaseCommand):
    help = "Create a named invitation link, optionally limited to QUOTA assignments, and print it."

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("--name", required=True, help="Who the link is for.")
        parser.add_argument("--quota", type=int, default=None, help="Most assignments it starts.")
        parser.add_argument("--base-url", default=None, help="e.g. https://labels.example.org")

    def handle(self, *args, campaign: int, name: str, quota: int | None, base_url, **options):
        found = campaign_or_error(campaign)
        base_url = base_url_or_error(base_url)
        try:
            link = invitation_link_create(campaign=found, name=name, quota=quota)
        except CfannotateError as error:
            raise command_error(error) from None
        url = base_url + reverse("join-link", kwargs={"token": link_token(link.id)})
        limit = f", for {quota} assignments" if quota else ""
        self.stdout.write(self.style.SUCCESS(f"Invitation link {link.name!r}{limit}: {url}"))
