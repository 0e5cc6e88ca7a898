"""Create the demo researcher and campaigns from fixtures, and print where to look."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.demo import demo_setup
from cfannotate.core.exceptions import CfannotateError


class Command(BaseCommand):
    help = "Create the demo researcher login and the fixture campaigns (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        try:
            setup = demo_setup()
        except CfannotateError as error:
            raise CommandError(error.message) from None
        base = base_url.rstrip("/")
        out = self.stdout
        out.write(self.style.SUCCESS("Demo ready."))
        out.write(f"  Log in:     {base}/accounts/login/  as {setup.username} / {setup.password}")
        for campaign in setup.campaigns:
            out.write(
                f"  Campaign:   {base}/campaigns/{campaign.id}/  {campaign.name} "
                f"({campaign.originals.count()} originals)"
            )
        out.write(f"  Admin:      {base}/admin/")
        out.write(f"  API schema: {base}/api/schema/   docs: {base}/api/docs/")
