"""`manage.py crowd_sync CAMPAIGN`: HIT status, Prolific submissions; abandoned work freed."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.core.text import counted
from cfannotate.crowd.management.helpers import campaign_or_error
from cfannotate.crowd.publishing import platform_sync


class Command(BaseCommand):
    help = (
        "Sync a campaign's publications with their platforms: HIT counts, decisions made "
        "there, returned and timed-out submissions (their units go back to the pool). "
        "Exits non-zero when a platform could not be synced."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")

    def handle(self, *args, campaign: int, **options):
        report = platform_sync(campaign=campaign_or_error(campaign))
        for problem in report.problems:
            self.stderr.write(problem)
        if not report.problems:
            self.stdout.write(self.style.SUCCESS(f"Synced: {report.summary()}"))
            return
        # What did sync is kept and said; the command still fails, so a script sees it.
        self.stdout.write(self.style.WARNING(f"Synced with problems: {report.summary()}"))
        raise CommandError(f"The sync met {counted(len(report.problems), 'problem')}: see above.")
