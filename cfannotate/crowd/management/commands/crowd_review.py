"""`manage.py crowd_review approve|reject|bonus|block ...`: review decisions on the platform."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd import review
from cfannotate.crowd.management.helpers import campaign_or_error, command_error
from cfannotate.crowd.models import BlockScope, Worker
from cfannotate.labeling.models import Assignment


class Command(BaseCommand):
    help = (
        "Approve, reject or bonus an assignment, or block a worker, here and on the "
        "worker's platform (after checking the platform's own record)."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="decision", required=True)
        approve = actions.add_parser("approve", help="Approve a submitted assignment.")
        approve.add_argument("assignment", type=int)
        approve.add_argument("--feedback", default="")
        reject = actions.add_parser("reject", help="Reject an assignment, saying why.")
        reject.add_argument("assignment", type=int)
        reject.add_argument("--feedback", required=True)
        bonus = actions.add_parser("bonus", help="Pay a bonus once per --token.")
        bonus.add_argument("assignment", type=int)
        bonus.add_argument("--amount", required=True)
        bonus.add_argument("--reason", required=True)
        bonus.add_argument("--token", required=True, help="Unique per bonus; reuse it to retry.")
        block = actions.add_parser(
            "block",
            help=(
                "Block a worker (our worker id): everywhere, as an administrator, and on "
                "their platform; with --campaign, from that campaign's researcher's "
                "campaigns only (or, with --campaign-only, from that campaign), here only."
            ),
        )
        block.add_argument("worker", type=int)
        block.add_argument("--reason", required=True)
        block.add_argument("--campaign", type=int, default=None)
        block.add_argument("--campaign-only", action="store_true")

    def handle(self, *args, decision: str, **o):
        try:
            if decision == "block":
                worker = Worker.objects.filter(pk=o["worker"]).first()
                if worker is None:
                    raise CommandError(f"No worker with id {o['worker']}.")
                only = o["campaign_only"]
                self._block(worker, reason=o["reason"], campaign_id=o["campaign"], only=only)
                return
            assignment = Assignment.objects.filter(pk=o["assignment"]).first()
            if assignment is None:
                raise CommandError(f"No assignment with id {o['assignment']}.")
            if decision == "approve":
                review.assignment_approve(assignment=assignment, feedback=o["feedback"])
            elif decision == "reject":
                review.assignment_reject(assignment=assignment, feedback=o["feedback"])
            else:
                review.worker_bonus(
                    assignment=assignment,
                    amount=o["amount"],
                    reason=o["reason"],
                    unique_token=o["token"],
                )
        except CfannotateError as error:
            raise command_error(error) from None
        self.stdout.write(
            self.style.SUCCESS(f"{decision.capitalize()}: assignment {assignment.id}.")
        )

    def _block(self, worker: Worker, *, reason: str, campaign_id: int | None, only: bool) -> None:
        if campaign_id is None:
            if only:
                raise CommandError("--campaign-only needs --campaign.")
            review.worker_block(worker=worker, reason=reason, scope=BlockScope.EVERYWHERE)
            self.stdout.write(self.style.SUCCESS(f"Blocked {worker} everywhere."))
            return
        campaign = campaign_or_error(campaign_id)
        scope = BlockScope.CAMPAIGN if only else BlockScope.RESEARCHER
        review.worker_block(worker=worker, reason=reason, scope=scope, campaign=campaign)
        where = f"campaign {campaign.id}" if only else f"every campaign of {campaign.owner}"
        self.stdout.write(self.style.SUCCESS(f"Blocked {worker} from {where}."))
