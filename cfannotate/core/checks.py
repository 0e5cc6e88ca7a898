"""System checks for the deployment (ids cfannotate.E0xx / W0xx)."""

from django.conf import settings
from django.core import checks
from rest_framework.authentication import TokenAuthentication
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from cfannotate.core.api_tokens import ApiTokenAuthentication
from cfannotate.core.json_input import BoundedJSONParser


@checks.register(checks.Tags.security, deploy=True)
def check_production_mode(app_configs, **kwargs):
    messages = []
    if not getattr(settings, "PRODUCTION", False):
        messages.append(
            checks.Warning(
                "CFANNOTATE_PRODUCTION is not set, so development defaults are in force.",
                hint="Set CFANNOTATE_PRODUCTION=1 for a deployment.",
                id="cfannotate.W001",
            )
        )
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and getattr(
        settings, "PRODUCTION", False
    ):
        messages.append(
            checks.Warning(
                "Production is running on SQLite; several labeling servers and GPU workers "
                "need one PostgreSQL database to share.",
                hint="Set DATABASE_URL=postgres://...",
                id="cfannotate.W002",
            )
        )
    return messages


def _configured_kinds_of(classes, kind: type, but_not: type) -> list[str]:
    """Dotted names of the configured `classes` that are a `kind` but not a `but_not`."""
    return [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes
        if issubclass(cls, kind) and not issubclass(cls, but_not)
    ]


@checks.register(checks.Tags.security)
def check_api_token_authentication(app_configs, **kwargs):
    """Tokens are stored as digests: a token class that compares plain keys finds none."""
    plain = _configured_kinds_of(
        api_settings.DEFAULT_AUTHENTICATION_CLASSES, TokenAuthentication, ApiTokenAuthentication
    )
    return [
        checks.Warning(
            f"REST_FRAMEWORK authenticates API tokens with {name}, which looks up plain keys; "
            "cfannotate stores only their digests, so no token would authenticate.",
            hint="Use cfannotate.core.api_tokens.ApiTokenAuthentication (or a subclass).",
            id="cfannotate.W010",
        )
        for name in plain
    ]


@checks.register(checks.Tags.security)
def check_json_parser(app_configs, **kwargs):
    """A JSON body nested thousands deep must be a 400, not a RecursionError."""
    unbounded = _configured_kinds_of(
        api_settings.DEFAULT_PARSER_CLASSES, JSONParser, BoundedJSONParser
    )
    return [
        checks.Warning(
            f"REST_FRAMEWORK parses JSON bodies with {name}, which has no bound on nesting: "
            "a deeply nested body ends in a server error.",
            hint="Use cfannotate.core.json_input.BoundedJSONParser.",
            id="cfannotate.W011",
        )
        for name in unbounded
    ]
