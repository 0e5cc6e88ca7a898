"""`manage.py prolific_places CAMPAIGN [--add N|short] [--up-to N|off] [--study ID]`: a
campaign's Prolific places, more of them when its units need more assignments than the
studies can take, and the cap up to which the labeling sweep adds them by itself."""

from django.core.management.base import BaseCommand, CommandError
from django.template.defaultfilters import pluralize

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd.management.helpers import campaign_or_error, command_error
from cfannotate.crowd.places import (
    MAX_PLACES,
    places_added_message,
    places_cap_message,
    publication_places_add,
    publication_places_cap_set,
)
from cfannotate.crowd.selectors import places_short, study_places


class Command(BaseCommand):
    help = (
        "List the places of a campaign's Prolific studies and how many are taken; with "
        "--add, let N more workers take a study (default: the newest); --add short adds "
        "what the units still lack. With --up-to, let the labeling sweep add places by "
        "itself as the units need them, up to N in all (off: only by hand)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument(
            "--add", help="Places to add: a number, or 'short' for what the units still lack."
        )
        parser.add_argument("--up-to", help="The most places the sweep may add up to, or 'off'.")
        parser.add_argument("--study", help="Prolific study id (default: the newest study).")

    def handle(self, *args, campaign: int, add: str | None, study: str | None, **options):
        # Every option is read, and the study found, before anything is changed.
        wants_short, places = _places_to_add(add)
        up_to = options["up_to"]
        cap = None if up_to is None else _cap(up_to)
        campaign = campaign_or_error(campaign)
        studies = study_places(campaign)
        if not studies:
            raise CommandError(
                f"Campaign {campaign.id} has no Prolific study: create one with prolific_study."
            )
        chosen = _study(studies, study)
        short = places_short(campaign, studies)
        self._list(studies, short)
        if up_to is not None:
            try:
                publication = publication_places_cap_set(publication=chosen.publication, up_to=cap)
            except CfannotateError as error:
                raise command_error(error) from None
            self.stdout.write(self.style.SUCCESS(places_cap_message(publication)))
        if add is None:
            return
        if wants_short:
            places = short.short if short else None
        if places is None:
            self.stdout.write(self.style.SUCCESS("The studies have places enough: none added."))
            return
        try:
            publication = publication_places_add(publication=chosen.publication, places=places)
        except CfannotateError as error:
            raise command_error(error) from None
        self.stdout.write(self.style.SUCCESS(places_added_message(publication)))

    def _list(self, studies, short) -> None:
        for each in studies:
            publication = each.publication
            cap = f", added by itself up to {each.up_to}" if each.up_to else ""
            self.stdout.write(
                f"Study {publication.external_id} ({publication.status or 'no status'}): "
                f"{each.places} place{pluralize(each.places)}, {each.taken} taken, "
                f"{each.left} left{cap}."
            )
        if short:
            self.stdout.write(
                f"The units still need about {short.needed} new assignments and the studies "
                f"have {short.left} place{pluralize(short.left)} left: {short.short} short."
            )


def _places_to_add(add: str | None) -> tuple[bool, int | None]:
    """(whether --add asks for the shortfall, the number of places it asks for)."""
    if add is None:
        return False, None
    if add.strip().lower() == "short":
        return True, None
    try:
        places = int(add)
    except ValueError:
        raise CommandError(f"--add takes a number of places or 'short', not {add!r}.") from None
    if not 1 <= places <= MAX_PLACES:
        raise CommandError(f"--add takes 1 to {MAX_PLACES} places or 'short', not {places}.")
    return False, places


def _cap(up_to: str) -> int | None:
    if up_to.strip().lower() == "off":
        return None
    try:
        return int(up_to)
    except ValueError:
        raise CommandError(f"--up-to takes a number of places or 'off', not {up_to!r}.") from None


def _study(studies, external_id: str | None):
    if external_id is None:
        return studies[-1]
    for each in studies:
        if each.publication.external_id == external_id:
            return each
    known = ", ".join(each.publication.external_id for each in studies)
    raise CommandError(f"No Prolific study {external_id!r} in this campaign (it has {known}).")
