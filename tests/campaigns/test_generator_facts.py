"""The settings page's facts about `generation/` are read once and kept in the shared cache.

Reading them imports every generator (8-12 s in a fresh process: the settings page's
first load of issue 24); a process that finds them in the cache imports nothing first.
"""

import threading
from types import SimpleNamespace

import pytest
from django.core.cache import cache

from cfannotate.campaigns import generator_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def fresh_facts():
    """No facts in this process's memory, before and after the test."""
    generator_settings._generation_facts.cache_clear()
    yield
    generator_settings._generation_facts.cache_clear()


def test_a_fresh_process_reads_the_facts_from_the_cache(fresh_facts, monkeypatch):
    facts = generator_settings._generation_facts()
    key = f"{generator_settings.FACTS_CACHE_KEY}:{generator_settings.generation_fingerprint()}"
    assert cache.get(key) == facts
    assert {"polyjuice", "lexicon-remove"} <= {row["name"] for row in facts["generators"]}

    # As a new process would: nothing in memory, the facts in the cache.
    generator_settings._generation_facts.cache_clear()

    def never(*args, **kwargs):
        raise AssertionError("read the generators again, or imported them in a thread")

    monkeypatch.setattr(generator_settings, "_generation_facts_read", never)
    # No background import either: it raced the caller's own imports of spaCy
    # (cfannotate.core.ml_imports).
    monkeypatch.setattr(threading, "Thread", never)
    engines, apis = generator_settings.engine_choices()
    assert [name for name, _ in engines] == facts["engines"] and apis
    slices, codes = generator_settings.targeting_choices()
    assert slices and [code for code, _ in codes] == facts["codes"]
    catalog = generator_settings.generator_catalog()
    assert [info.name for info in catalog] == [row["name"] for row in facts["generators"]]
    assert generator_settings.engine_defaults()["engine"]


def test_the_fingerprint_follows_the_source_files(tmp_path, monkeypatch):
    (tmp_path / "module.py").write_text("A = 1\n")
    monkeypatch.setattr(
        generator_settings.importlib.util,
        "find_spec",
        lambda name: SimpleNamespace(submodule_search_locations=[str(tmp_path)]),
    )
    before = generator_settings.generation_fingerprint()
    assert before == generator_settings.generation_fingerprint()
    (tmp_path / "module.py").write_text("A = 22\n")
    assert generator_settings.generation_fingerprint() != before
