"""Generate candidate counterfactuals for a campaign's originals, in this process."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.services import candidates_generate
from cfannotate.core.exceptions import CfannotateError


class Command(BaseCommand):
    help = "Generate candidate counterfactuals for a campaign (Polyjuice, fluency-filtered)."

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("--limit", type=int, default=None,
                            help="Only the first N originals (by id).")
        parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N.")

    def handle(self, *args, campaign: int, limit: int | None, device: str, **options):
        from generation.models import ModelUnavailable

        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1.")
        originals = list(found.originals.select_related("label").order_by("id")[:limit])
        try:
            summary = candidates_generate(campaign=found, originals=originals, device=device,
                                          show_progress=True)
        except (CfannotateError, ModelUnavailable, ValueError) as error:
            raise CommandError(getattr(error, "message", str(error))) from None
        self.stdout.write(self.style.SUCCESS(
            f"{found.name}: {summary.stored} new candidates ({summary.kept} passed the fluency "
            f"filter) from {summary.originals} originals and {summary.prompts} prompts in "
            f"{summary.seconds.get('total', 0):.1f}s."
        ))
