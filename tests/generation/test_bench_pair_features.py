"""bench/pair_features.py: the pair baseline with and without its pair features, on a
CAD-shaped folder the test writes; one-line errors for missing data and bad counts."""

from bench.pair_features import Pair, measure
from tests.generation.pair_scenes import SCENES, UNRELATED
from tests.support import run_bench


def _originals() -> list[Pair]:
    """Entailed hypotheses repeat their premise; neutral ones share nothing with it."""
    entailed = [Pair(premise, text, "entailment") for premise, text in SCENES]
    neutral = [Pair(p, UNRELATED[i % 3], "neutral") for i, (p, _) in enumerate(SCENES)]
    return [pair for both in zip(entailed, neutral, strict=True) for pair in both]


def _write(folder, name, pairs):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["sentence1\tsentence2\tgold_label"]
    lines += [f"{p.premise}\t{p.hypothesis}\t{p.label}" for p in pairs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_pair_features_find_what_repeats_the_premise():
    originals = _originals()
    revisions = [Pair(p.premise, "Nothing like it happens.", "neutral") for p in originals[::2]]
    ours = measure(originals, revisions, pair=True)
    baseline = measure(originals, revisions, pair=False)
    assert ours["revised"] == baseline["revised"] == len(revisions)
    assert ours["right"] > baseline["right"]
    assert ours["revised_right"] >= baseline["revised_right"]


def test_the_script_prints_both_and_its_result_line(tmp_path):
    originals = _originals()
    _write(tmp_path, "NLI_original/train.tsv", originals)
    _write(
        tmp_path,
        "NLI_revised_hypothesis/train.tsv",
        [Pair(p.premise, "Nothing like it happens.", "neutral") for p in originals[::2]],
    )
    done = run_bench("pair_features.py", "--data", str(tmp_path), "--originals", "20")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("baseline originals right") and lines[1].startswith("ours")
    assert lines[-1].startswith("RESULT pair_features ratio=") and "originals=20" in lines[-1]


def test_missing_data_and_too_few_originals_are_one_line_errors(tmp_path):
    missing = run_bench("pair_features.py", "--data", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "the CAD NLI data is missing" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    _write(tmp_path, "NLI_original/train.tsv", _originals())
    _write(tmp_path, "NLI_revised_hypothesis/train.tsv", [])
    few = run_bench("pair_features.py", "--data", str(tmp_path), "--originals", "3")
    assert few.returncode == 2 and "--originals must be at least 10" in few.stderr
