"""`manage.py crowd_link CAMPAIGN --name NAME [--quota N]`: an invitation link for annotators;
`--worker NAME [--days N]`: a personal link for one named annotator."""

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.core.worker_tokens import link_token, personal_link_token
from cfannotate.crowd.management.helpers import base_url_or_error, campaign_or_error, command_error
from cfannotate.crowd.services import (
    PERSONAL_LINK_DAYS,
    invitation_link_create,
    personal_link_create,
)


class Command(BaseCommand):
    help = (
        "Create a named invitation link, optionally limited to QUOTA assignments, or a "
        "personal link for one worker (signed, valid for DAYS days), and print it."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--name", help="Who the (shared) link is for.")
        who.add_argument("--worker", help="The one worker a personal link is for.")
        parser.add_argument(
            "--quota", type=int, default=None, help="Most assignments a --name link starts."
        )
        parser.add_argument(
            "--days",
            type=int,
            default=None,
            help=f"How long a --worker link works (default: {PERSONAL_LINK_DAYS}).",
        )
        parser.add_argument("--base-url", default=None, help="e.g. https://labels.example.org")

    def handle(self, *args, campaign: int, name, worker, quota, days, base_url, **options):
        _refuse_options_that_do_not_apply(worker=worker, quota=quota, days=days)
        found = campaign_or_error(campaign)
        base_url = base_url_or_error(base_url)
        try:
            if worker is not None:
                personal = personal_link_create(
                    campaign=found,
                    worker_name=worker,
                    days=PERSONAL_LINK_DAYS if days is None else days,
                )
            else:
                link = invitation_link_create(campaign=found, name=name, quota=quota)
        except CfannotateError as error:
            raise command_error(error) from None
        if worker is not None:
            token = personal_link_token(
                link_id=personal.id,
                worker=personal.worker.external_id,
                expires_at=personal.expires_at,
            )
            url = base_url + reverse("join-personal", kwargs={"token": token})
            until = f"{personal.expires_at:%Y-%m-%d %H:%M} UTC"
            self.stdout.write(
                self.style.SUCCESS(f"Personal link of {worker!r}, until {until}: {url}")
            )
            return
        url = base_url + reverse("join-link", kwargs={"token": link_token(link.id)})
        limit = f", for {counted(quota, 'assignment')}" if quota else ""
        self.stdout.write(self.style.SUCCESS(f"Invitation link {link.name!r}{limit}: {url}"))


def _refuse_options_that_do_not_apply(*, worker, quota, days) -> None:
    if worker is not None and quota is not None:
        raise CommandError(
            "--quota does not go with --worker: a personal link is for one worker; "
            "a quota limits a shared --name link."
        )
    if worker is None and days is not None:
        raise CommandError(
            "--days does not go with --name: a shared link has no end date; "
            "--days is for a personal --worker link."
        )
