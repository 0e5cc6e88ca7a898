from io import StringIO

from django.contrib.auth import authenticate
from django.core.management import call_command

from cfannotate.campaigns.models import Campaign


def test_demo_setup_is_idempotent_and_prints_a_working_login(db):
    out = StringIO()
    call_command("demo_setup", generate=0, stdout=out)
    call_command("demo_setup", generate=0, stdout=(second := StringIO()))
    assert Campaign.objects.count() == 2
    counts = sorted(c.originals.count() for c in Campaign.objects.all())
    assert counts == [20, 40]
    line = next(line for line in second.getvalue().splitlines() if "Log in:" in line)
    username, password = line.split(" as ")[1].split(" / ")
    assert authenticate(username=username.strip(), password=password.strip()) is not None
    assert "/api/schema/" in out.getvalue()
