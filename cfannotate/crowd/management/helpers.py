"""What the crowd commands share: finding a campaign, one clear line for every error."""

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from django.core.management.base import CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError


def campaign_or_error(campaign_id: int) -> Campaign:
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise CommandError(f"No campaign with id {campaign_id}.")
    return campaign


def command_error(error: CfannotateError, options: Mapping[str, str] | None = None) -> CommandError:
    """One line: the message, then each field's problems. `options` maps a service's field
    names to the command's options (`assignments_per_hit` to `--per-hit`), so the line
    names what the person typed."""
    options = options or {}
    message = _with_options(error.message, error.fields, options)
    details = "; ".join(
        f"{options.get(where, where)}: {', '.join(messages)}"
        for where, messages in error.fields.items()
    )
    return CommandError(message + (f" ({details})" if details else ""))


def _with_options(message: str, fields: Mapping, options: Mapping[str, str]) -> str:
    """The message with the erroneous fields it names, as whole words, written as options."""
    named = [field for field in fields if field in options]
    if not named:
        return message
    word = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, named)) + r")(?![\w-])")
    return word.sub(lambda found: options[found.group(1)], message)


def http_url_or_error(url: str, *, source: str) -> str:
    """The http(s) address without its trailing slash; `source` (an option or a setting)
    is named when it is not one."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:  # "http://[::1", say
        host = None
    if host is None or parts.scheme not in ("http", "https"):
        raise CommandError(
            f"{source} must be an http:// or https:// address such as "
            f"https://labels.example.org, not {url!r}."
        )
    return url.strip().rstrip("/")


def base_url_or_error(given: str | None) -> str:
    from cfannotate.crowd.providers import public_base_url

    if given is not None:
        return http_url_or_error(given, source="--base-url")
    base_url = public_base_url()
    if not base_url:
        raise CommandError(
            "Where do workers reach this site? Pass --base-url https://... or set "
            "CFANNOTATE_PUBLIC_URL."
        )
    return http_url_or_error(base_url, source="CFANNOTATE_PUBLIC_URL")
