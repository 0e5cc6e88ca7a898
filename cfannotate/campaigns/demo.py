"""The demo: a researcher login and two campaigns built from the project's fixtures."""

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from cfannotate.campaigns.datasets import read_jsonl
from cfannotate.campaigns.models import Campaign, TaskType
from cfannotate.campaigns.services import campaign_create, originals_import

FIXTURES_DIR = Path(settings.BASE_DIR) / "fixtures"
DEMO_USERNAME = "researcher"

DEMO_CAMPAIGNS = [
    ("Movie review sentiment (demo)", TaskType.SENTIMENT, "sentiment_reviews.jsonl"),
    ("Natural language inference (demo)", TaskType.NLI, "nli_pairs.jsonl"),
]


@dataclass(frozen=True)
class DemoSetup:
    username: str
    password: str
    campaigns: list[Campaign]


@transaction.atomic
def demo_setup() -> DemoSetup:
    """Create (or refresh) the demo researcher and campaigns; safe to run repeatedly.

    The researcher gets a new random password each run, printed by the command, so
    no well-known credentials exist even on a demo install.
    """
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=DEMO_USERNAME)
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()

    campaigns = []
    for name, task_type, fixture in DEMO_CAMPAIGNS:
        campaign = Campaign.objects.filter(owner=user, name=name).first()
        if campaign is None:
            campaign = campaign_create(owner=user, name=name, task_type=task_type)
            originals_import(campaign=campaign, records=read_jsonl(FIXTURES_DIR / fixture))
        campaigns.append(campaign)
    return DemoSetup(username=user.username, password=password, campaigns=campaigns)
