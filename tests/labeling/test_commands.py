"""`manage.py import_gold`: a file's bad lines, each said once, in one line."""

import pytest
from django.core.management import CommandError, call_command

from cfannotate.labeling.models import GoldRound
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


def test_a_line_that_is_not_json_is_said_once(tmp_path):
    campaign = make_campaign()
    path = tmp_path / "g_notjson.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_gold", str(campaign.id), str(path))
    assert str(caught.value) == (
        "g_notjson.jsonl: line 1: Not valid JSON: Expecting value (character 1)."
    )
    assert not GoldRound.objects.exists()


def test_every_bad_line_is_said_once(tmp_path):
    campaign = make_campaign()
    path = tmp_path / "gold.jsonl"
    path.write_text('not json\n{"original_id": \n', encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_gold", str(campaign.id), str(path))
    message = str(caught.value)
    assert message.startswith("gold.jsonl: line 1: Not valid JSON")
    assert message.count("line 1:") == 1 and message.count("line 2:") == 1
    assert "\n" not in message
