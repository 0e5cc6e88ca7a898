"""WSGI entry point (gunicorn cfannotate.wsgi; runserver loads it too)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
application = get_wsgi_application()

# The ML library, imported here, in one thread, before any request thread could be the
# first to import it (cfannotate.core.ml_imports says why).
from cfannotate.core.ml_imports import ml_modules_load  # noqa: E402

ml_modules_load()
