"""`manage.py prolific_study CAMPAIGN ...`: a draft Prolific study pointing at this campaign."""

from django.core.management.base import BaseCommand

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd.management.helpers import base_url_or_error, campaign_or_error, command_error
from cfannotate.crowd.providers.prolific import ProlificOptions
from cfannotate.crowd.publishing import prolific_study_create
from cfannotate.crowd.selectors import assignments_needed

# ProlificOptions' fields as this command's options, for the one line an error is.
OPTIONS = {
    "name": "--name",
    "description": "--description",
    "places": "--places",
    "reward_cents": "--reward-cents",
    "minutes": "--minutes",
    "base_url": "--base-url",
}


class Command(BaseCommand):
    help = (
        "Create a draft Prolific study whose URL is the campaign's entry URL, with a fresh "
        "completion code; review, fund and publish it on Prolific."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("--name", required=True, help="Shown to participants.")
        parser.add_argument("--description", required=True)
        parser.add_argument("--reward-cents", type=int, required=True, help="Per participant.")
        parser.add_argument("--minutes", type=int, required=True, help="Estimated duration.")
        parser.add_argument("--places", type=int, help="Default: what the units still need.")
        parser.add_argument("--base-url", default=None, help="https:// address of this site.")

    def handle(self, *args, **o):
        campaign = campaign_or_error(o["campaign"])
        base_url = base_url_or_error(o["base_url"])
        places = o["places"]
        options = ProlificOptions(
            name=o["name"],
            description=o["description"],
            places=assignments_needed(campaign) if places is None else places,
            reward_cents=o["reward_cents"],
            minutes=o["minutes"],
        )
        try:
            publication = prolific_study_create(
                campaign=campaign, options=options, base_url=base_url
            )
        except CfannotateError as error:
            raise command_error(error, OPTIONS) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Created draft Prolific study {publication.external_id} "
                f"(completion code {publication.completion_code})."
            )
        )
