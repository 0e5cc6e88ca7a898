"""`manage.py crowd_review approve|reject|bonus|block ...`: review decisions on the platform."""

from django.core.management.base import BaseCommand, CommandError

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd import review
from cfannotate.crowd.management.helpers import command_error
from cfannotate.crowd.models import Worker
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
        block = actions.add_parser("block", help="Block a worker (our worker id).")
        block.add_argument("worker", type=int)
        block.add_argument("--reason", required=True)

    def handle(self, *args, decision: str, **o):
        try:
            if decision == "block":
                worker = Worker.objects.filter(pk=o["worker"]).first()
                if worker is None:
                    raise CommandError(f"No worker with id {o['worker']}.")
                review.worker_block(worker=worker, reason=o["reason"])
                self.stdout.write(self.style.SUCCESS(f"Blocked {worker}."))
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
