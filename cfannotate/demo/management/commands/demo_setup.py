"""Create the demo researcher and campaigns from fixtures, and print where to look."""

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from cfannotate.campaigns.generator_settings import generator_catalog
from cfannotate.campaigns.models import CampaignStatus
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.text import counted
from cfannotate.core.worker_tokens import join_token
from cfannotate.crowd.management.helpers import http_url_or_error
from cfannotate.demo.setup import GenerationProgress, demo_generate, demo_setup


class Command(BaseCommand):
    help = "Create the demo researcher login and the fixture campaigns (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--generate",
            type=int,
            default=3,
            metavar="N",
            help="Generate candidates for the first N originals of each campaign (0: skip).",
        )

    def _progress(self, progress: GenerationProgress) -> None:
        """One line per batch as generation goes, so minutes of work are never silent; the
        first says what is being done (nothing is said when every campaign has its
        candidates already)."""
        if progress.done == 0 and not self._introduced:
            self._introduced = True
            self.stdout.write(
                f"Generating candidates for {counted(self._generate, 'original')} per campaign "
                "with the packaged model (CPU, a minute or two; slower on a busy machine)."
            )
        self.stdout.write(f"  {progress.line()}")
        self.stdout.flush()

    def handle(self, *args, base_url: str, generate: int, **options):
        from generation.models import ModelUnavailable

        base = http_url_or_error(base_url, source="--base-url")
        if generate < 0:
            raise CommandError(f"--generate takes 0 (skip) or more originals, not {generate}.")
        try:
            setup = demo_setup()
            # Kept in the shared cache: the settings page's first load then imports nothing.
            generator_catalog()
            if generate > 0:
                self._generate, self._introduced = generate, False
                lines = demo_generate(
                    setup.campaigns,
                    originals_per_campaign=generate,
                    on_progress=self._progress,
                )
                for line in lines:
                    self.stdout.write(f"  {line}")
        except (CfannotateError, ModelUnavailable) as error:
            raise CommandError(getattr(error, "message", str(error))) from None
        out = self.stdout
        out.write(self.style.SUCCESS("Demo ready."))
        out.write(f"  Log in:     {base}/accounts/login/  as {setup.username} / {setup.password}")
        for campaign in setup.campaigns:
            campaign.refresh_from_db()
            out.write(
                f"  Campaign:   {base}/campaigns/{campaign.id}/  {campaign.name} "
                f"({campaign.originals.count()} originals)"
            )
            if campaign.status == CampaignStatus.LABELING:
                link = reverse("join", kwargs={"token": join_token(campaign.id)})
                out.write(f"  Label it:   {base}{link}  (the worker's view)")
        if setup.example is not None:
            example = setup.example
            out.write(
                f"  Example:    {base}/campaigns/{example.id}/  {example.name}: already labeled; "
                f"quality at {base}/campaigns/{example.id}/quality/, "
                f"exports at {base}/campaigns/{example.id}/exports/"
            )
        out.write(f"  Admin:      {base}/admin/")
        out.write(f"  API schema: {base}/api/schema/   docs: {base}/api/docs/")
