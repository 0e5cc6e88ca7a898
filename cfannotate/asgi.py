"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
application = get_asgi_application()

# As in cfannotate.wsgi: the ML library, imported in one thread before serving.
from cfannotate.core.ml_imports import ml_modules_load  # noqa: E402

ml_modules_load()
