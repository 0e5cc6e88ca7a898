"""`manage.py quality_refresh CAMPAIGN [--apply]`: run quality control on a campaign now."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.core.text import counted
from cfannotate.quality.decisions import decisions_apply
from cfannotate.quality.models import DecisionState, WorkerDecision
from cfannotate.quality.selectors import quality_report
from cfannotate.quality.services import quality_refresh


def _kappa(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Apply the worker filter (Appendix C.2), vote on every judged counterfactual, "
        "re-queue disputed units and propose worker decisions; print the agreement."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument(
            "--apply",
            action="store_true",
            help="Also send the decisions already confirmed on the quality page.",
        )

    def handle(self, *args, campaign: int, apply: bool, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign with id {campaign}.")
        summary = quality_refresh(campaign=found)
        report = quality_report(found)
        self.stdout.write(
            f"{summary.qualified} of {summary.workers} workers qualified; "
            f"{summary.kept} of {summary.candidates} counterfactuals kept; "
            f"{counted(summary.requeued_units, 'unit')} re-queued; "
            f"{counted(summary.decisions_proposed, 'decision')} proposed or updated."
        )
        agreement = report.label_agreement_qualified
        self.stdout.write(
            f"Label agreement of qualified workers on {agreement.items} counterfactuals: "
            f"raw {_kappa(agreement.raw)}, Cohen's kappa {_kappa(agreement.cohen_kappa)}, "
            f"Fleiss' kappa {_kappa(agreement.fleiss_kappa)}."
        )
        for note in agreement.notes:
            self.stdout.write(f"  {note}")
        if apply:
            self._apply(found)

    def _apply(self, campaign: Campaign) -> None:
        """Send the confirmed decisions; each one refused is printed with the platform's
        reason, and the command then fails."""
        confirmed = list(
            WorkerDecision.objects.filter(
                campaign=campaign, state=DecisionState.CONFIRMED
            ).values_list("id", flat=True)
        )
        applied, failed = decisions_apply(campaign=campaign)
        message = f"Sent {counted(applied, 'decision')} to the platforms; {failed} refused."
        if not failed:
            self.stdout.write(message)
            return
        self.stdout.write(self.style.WARNING(message))
        refused = WorkerDecision.objects.filter(id__in=confirmed, state=DecisionState.FAILED)
        for decision in refused.select_related("worker").order_by("id"):
            self.stderr.write(
                f"  {decision.get_action_display()} for worker {decision.worker}: "
                f"{decision.error or 'refused, without a reason.'}"
            )
        raise CommandError(f"{counted(failed, 'decision')} refused by the platforms: see above.")
