"""`manage.py crowd_sync CAMPAIGN`: HIT status, Prolific submissions; abandoned work freed."""

from django.core.management.base import BaseCommand

from cfannotate.crowd.management.helpers import campaign_or_error
from cfannotate.crowd.publishing import platform_sync


class Command(BaseCommand):
    help = (
        "Sync a campaign's publications with their platforms: HIT counts, decisions made "
        "there, returned and timed-out submissions (their units go back to the pool)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")

    def handle(self, *args, campaign: int, **options):
        report = platform_sync(campaign=campaign_or_error(campaign))
        for problem in report.problems:
            self.stderr.write(problem)
        self.stdout.write(self.style.SUCCESS(f"Synced: {report.summary()}"))
