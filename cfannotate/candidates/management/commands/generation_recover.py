"""Queue again the generation chunks whose worker died (lease expired)."""

from django.core.management.base import BaseCommand

from cfannotate.candidates.runs import requeue_stale_chunks
from cfannotate.core.text import counted


class Command(BaseCommand):
    help = "Re-queue generation chunks whose worker stopped before finishing (expired lease)."

    def handle(self, *args, **options):
        count = requeue_stale_chunks()
        self.stdout.write(f"{counted(count, 'chunk')} queued again.")
