"""Background tasks of generation and of candidate imports (Django's tasks API; workers
run `manage.py db_worker`)."""

from django_tasks import task

from cfannotate.candidates.imports import candidate_import_process
from cfannotate.candidates.runs import generation_chunk_process


@task(queue_name="generation")
def generate_chunk(chunk_id: int) -> str:
    """Generate one chunk's candidates on whatever machine took the task (GPU or CPU)."""
    return generation_chunk_process(chunk_id=chunk_id)


@task(queue_name="default")
def import_candidates(import_id: int) -> str:
    """Annotate and store one uploaded file of the researcher's own candidates."""
    return candidate_import_process(import_id)
