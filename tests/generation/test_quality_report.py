"""The quality report's figures on scripted results, the stand-in classifier, the
`evaluate` command's usage errors and bench/generation_quality.py with tiny models."""

import json
import math
import subprocess
from pathlib import Path

import pytest

from generation import cli
from generation.cad_sentiment import (
    CadDataMissing,
    HeldOut,
    SentimentClassifier,
    SentimentPair,
    held_out_originals,
    sentiment_pairs,
)
from generation.fluency import FluencyScore
from generation.label_classifiers import LabeledText
from generation.metrics import self_bleu
from generation.pipeline import PipelineResult
from generation.postprocess import AnnotatedCandidate, PostprocessStats
from generation.quality_report import (
    QualityFigures,
    QualityReport,
    _StandIn,
    format_table,
    goal_met,
    in_loop_training,
    leaks,
    quality_figures,
    result_line,
    selected_candidates,
)
from generation.records import CandidateRecord, OriginalRecord
from generation.relationship import Relationship
from tests.generation.server_fixtures import Reply, StubServer, completion, free_port
from tests.generation.tiny_models import tiny_lm_directory
from tests.support import run_bench

REPO = Path(__file__).resolve().parents[2]
CAD = REPO.parent / "shared" / "data" / "cad"
GOOD = OriginalRecord(key="a", text="The movie was great fun.", label="Positive")
BAD = OriginalRecord(key="b", text="The plot was a dull mess.", label="Negative")


def _candidate(
    original: OriginalRecord,
    text: str,
    *,
    asked: str = "negation",
    detected: str = "negation",
    prompt: str = "[BLANK]",
    dropped_by: str | None = None,
    fluency: float = -1.0,
) -> AnnotatedCandidate:
    words = frozenset(text.lower().split()) - frozenset(original.text.lower().split())
    return AnnotatedCandidate(
        record=CandidateRecord(
            original_key=original.key,
            text=text,
            generator="polyjuice",
            control_code=asked,
            prompt=prompt,
        ),
        code=detected,
        edit={},
        relationship=Relationship(
            base=original.key, removed=frozenset(), added=words, tree=frozenset(), code=detected
        ),
        fluency=FluencyScore(full=fluency, changed=None),
        dropped_by=dropped_by,
    )


def _result(candidates, *, prompts: int, malformed: int) -> PipelineResult:
    stats = PostprocessStats(received=len(candidates), kept=sum(c.kept for c in candidates))
    for candidate in candidates:
        if not candidate.kept:
            stats.dropped[candidate.dropped_by] = stats.dropped.get(candidate.dropped_by, 0) + 1
    return PipelineResult(
        originals=[GOOD, BAD],
        candidates=list(candidates),
        stats=stats,
        prompts=prompts,
        malformed=malformed,
    )


def _by_word(texts: list[str]) -> list[str]:
    """A fake classifier: "great" without "not" reads positive, anything else negative."""
    return [
        "Positive" if "great" in t.lower() and "not" not in t.lower().split() else "Negative"
        for t in texts
    ]


def test_leaks_count_markers_and_format_breaks_the_original_does_not_have():
    specials = frozenset({"<|im_start|>"})

    assert leaks("The movie was [EQ] fun.", GOOD.text)
    assert leaks("The movie <|perturb|> was fun.", GOOD.text)
    assert leaks("The movie was fun <|im_start|>", GOOD.text, specials)
    assert leaks("The movie was fun ]", GOOD.text)  # a stray bracket breaks the format
    assert not leaks("The movie was not fun.", GOOD.text)
    assert not leaks("It was [sic] fun.", "It was [sic] great.")  # inherited from x


def test_figures_of_a_scripted_result():
    candidates = [
        _candidate(GOOD, "The movie was not fun."),
        _candidate(GOOD, "The movie was great fun [EQ]", dropped_by="truncated"),  # a leak
        _candidate(GOOD, "The film was great fun.", asked="lexical", detected="lexical"),
        _candidate(BAD, "The plot was a great mess.", asked="lexical", detected="negation"),
        _candidate(
            BAD,
            "The plot was a dull one.",
            asked="lexical",
            detected="delete",
            dropped_by="fluency_full",
        ),
    ]
    result = _result(candidates, prompts=3, malformed=4)

    figures = quality_figures(result, per_prompt=3, predict=_by_word, embeddings=False)

    assert figures.leaks == 1
    assert figures.candidates == 5 and figures.kept == 3
    assert figures.fluency == pytest.approx(3 / 5)
    assert figures.malformed_rate == pytest.approx(4 / 9)
    # Prompts: (a, negation) hits, (a, lexical) hits, (b, lexical) detected negation: miss.
    assert figures.code_success == pytest.approx(2 / 3)
    # Kept: "not fun." flips (Negative, x is Positive), "great fun." does not, "great mess." does.
    assert figures.flip_kept == pytest.approx(2 / 3)
    assert figures.selected == 3 and figures.flip_selected == pytest.approx(2 / 3)
    assert figures.dropped == {"fluency_full": 1, "truncated": 1}
    assert figures.embedding_distance is None
    assert figures.levenshtein == pytest.approx(1.0)  # one word changed in each
    assert 0 <= figures.self_bleu <= 1  # only original a has two kept texts
    assert math.isnan(figures.self_bleu_5)  # no original has five kept texts
    # What annotators see: a's two selected texts (b has one, which has no self-BLEU).
    assert figures.self_bleu_selected == pytest.approx(
        self_bleu(["The movie was not fun.", "The film was great fun."])
    )
    # Diversity of what the edits wrote: a's "not" and "film" share nothing.
    assert figures.self_bleu_edits == figures.self_bleu_edits_selected == 0.0
    assert math.isnan(figures.self_bleu_edits_5)


def test_edits_that_write_the_same_words_are_not_diverse_however_long_x_is():
    x = OriginalRecord(key="x", text="I think that this long movie was good to watch.", label="P")
    same = [
        _candidate(x, "I think that this long movie was not good to watch."),
        _candidate(x, "I do think that this long movie was not good to watch!"),
        _candidate(x, "I think that this long movie was bad to watch."),
    ]
    apart = [
        _candidate(x, "I think that this long movie was not good to watch."),
        _candidate(x, "I think that this long movie was dreadful to watch."),
        _candidate(x, "Nobody could think that this long movie was good to watch."),
    ]

    def figures(candidates):
        result = PipelineResult(
            originals=[x], candidates=candidates, stats=PostprocessStats(), prompts=1, malformed=0
        )
        return quality_figures(result, per_prompt=3, embeddings=False)

    # Whole texts share all of x either way; the edits' words tell the sets apart.
    assert figures(same).self_bleu_edits > figures(apart).self_bleu_edits == 0.0
    assert figures(apart).self_bleu > 0.5


def test_selection_keeps_three_per_original_and_leaves_global_rewrites_out():
    candidates = [_candidate(GOOD, f"The movie was {word} fun.") for word in "abcde"]
    candidates.append(_candidate(BAD, "Something else entirely.", detected="global"))
    candidates.append(_candidate(BAD, "The plot was no mess.", dropped_by="run_on"))

    chosen = selected_candidates(candidates)

    assert len(chosen) == 3
    assert {c.record.original_key for c in chosen} == {"a"}


def test_selection_weighs_predicted_flips_by_candidate_position():
    candidates = [_candidate(GOOD, "The movie was a fun.") for _ in range(3)]
    candidates.append(_candidate(BAD, "The plot was no mess.", dropped_by="run_on"))
    candidates.append(_candidate(GOOD, "The movie was not fun.", detected="insert"))
    flips = {4: 0.9, 3: 1.0}  # position 3 is dropped: never selected, whatever its score

    assert selected_candidates(candidates, 1) == [candidates[0]]
    assert selected_candidates(candidates, 1, flip=flips, flip_weight=0.0) == [candidates[0]]
    assert selected_candidates(candidates, 1, flip=flips, flip_weight=1.0) == [candidates[4]]


def test_a_result_with_nothing_kept_gives_nan_shares_not_errors():
    figures = quality_figures(
        _result([], prompts=2, malformed=6), per_prompt=3, predict=_by_word, embeddings=False
    )

    assert figures.malformed_rate == 1.0
    assert math.isnan(figures.fluency) and math.isnan(figures.flip_selected)
    assert goal_met("fluency", figures.fluency) is None


def test_goals_and_the_result_line():
    figures = QualityFigures(
        originals=2, prompts=3, continuations=9, malformed=0, candidates=5, kept=4,
        selected=3, leaks=0, dropped={}, fluency=0.8, code_success=0.5, malformed_rate=0.05,
        self_bleu=0.4, self_bleu_5=0.3, self_bleu_selected=0.35, self_bleu_edits=0.2,
        self_bleu_edits_5=0.15, self_bleu_edits_selected=0.25, levenshtein=3.0,
        embedding_distance=None, flip_kept=0.5, flip_selected=0.25,
    )  # fmt: skip
    report = QualityReport(
        ours=figures,
        baseline=figures,
        classifier_accuracy=0.86,
        classifier_sentence_accuracy=0.8,
        flip_human=0.75,
        pool=10,
        model="tiny",
        device="cpu",
        codes=("negation",),
    )

    assert goal_met("leaks", 0) and goal_met("malformed", 0.05) and goal_met("fluency", 0.8)
    assert not goal_met("flip_selected", 0.25)
    line = result_line(report)
    assert line.startswith("RESULT generation_quality leaks=0 malformed=0.050 flip_selected=0.250")
    assert "fluency=0.800" in line and "classifier_accuracy=0.860" in line
    assert "self_bleu_5=0.300" in line and "size-matched" in format_table(report)
    assert "self_bleu_selected=0.350" in line and "of the selected" in format_table(report)
    assert "self_bleu_edits=0.200 self_bleu_edits_5=0.150 self_bleu_edits_selected=0.250" in line
    assert "baseline_self_bleu_edits_5=0.150" in line
    assert "self-BLEU of the edits' words (A.3.2)" in format_table(report)
    assert "NO" in format_table(report)  # the flip goal is not met


def test_the_classifier_trains_on_both_sides_and_predicts():
    pairs = [
        SentimentPair(f"p{i}", f"A {good} film.", "Positive", f"A {bad} film.", "Negative")
        for i, (good, bad) in enumerate([("great", "awful"), ("superb", "dull"), ("fine", "bad")])
    ]

    classifier = SentimentClassifier().fit(pairs)

    assert classifier.predict(["A great film.", "An awful film."]) == ["Positive", "Negative"]
    assert classifier.accuracy(["A superb film."], ["Positive"]) == 1.0
    assert classifier.predict([]) == []


def test_missing_cad_files_raise_a_clear_error(tmp_path):
    with pytest.raises(CadDataMissing, match="sentiment file is missing"):
        sentiment_pairs(tmp_path, "dev")


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_held_out_originals_are_first_sentences_the_humans_changed():
    pairs = sentiment_pairs(CAD, "dev")[:60]

    held = held_out_originals(pairs, 5, seed=1)

    assert len(held.originals) == 5 and held.pool >= 5
    for original in held.originals:
        assert 6 <= len(original.text.split()) <= 22
        assert held.human[original.key] != original.text
        assert held.human_labels[original.key] != original.label


def test_evaluate_with_a_missing_data_folder_is_one_line_exit_2(tmp_path, capsys):
    status = cli.main(["evaluate", "--data", str(tmp_path / "nowhere"), "--quiet"])

    out, err = capsys.readouterr()
    assert status == cli.EXIT_USAGE and out == ""
    assert err.strip().splitlines() == [
        f"evaluate: no CAD sentiment data in {tmp_path / 'nowhere'} (--data)"
    ]


def test_evaluate_with_no_originals_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "sentiment_combined_paired").mkdir()

    status = cli.main(["evaluate", "--data", str(tmp_path), "--originals", "0", "--quiet"])

    assert status == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip() == "evaluate: --originals must be at least 1"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--temperature", "must be more than 0, not 0"),
        ("--top-p", "must be more than 0 and at most 1, not 0"),
    ],
)
def test_evaluate_with_bad_sampling_is_refused_naming_the_option(tmp_path, capsys, option, message):
    (tmp_path / "sentiment_combined_paired").mkdir()

    with pytest.raises(SystemExit) as exited:
        cli.main(["evaluate", "--data", str(tmp_path), option, "0", "--quiet"])

    assert exited.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(f"argument {option}: {message}")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--server-url", "http://gpu:8000/v1"], "--server-url needs --engine server."),
        (["--engine", "server"], "--engine server needs --server-url and --server-model."),
        (
            ["--engine", "server", "--server-url", "gpu:8000", "--server-model", "m"],
            "server_url must start with http:// or https:// (got 'gpu:8000').",
        ),
    ],
)
def test_evaluate_with_bad_server_options_is_one_line_exit_2(tmp_path, capsys, options, message):
    (tmp_path / "sentiment_combined_paired").mkdir()

    status = cli.main(["evaluate", "--data", str(tmp_path), "--quiet", *options])

    assert status == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip().splitlines() == [f"evaluate: {message}"]


def test_evaluate_with_negative_in_loop_pairs_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "sentiment_combined_paired").mkdir()

    status = cli.main(["evaluate", "--data", str(tmp_path), "--in-loop-pairs", "-1", "--quiet"])

    assert status == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip() == "evaluate: --in-loop-pairs must be 0 or more"


def test_the_in_loop_classifier_learns_revisions_of_dev_reviews_never_held_out():
    train = [SentimentPair("t", "A fun film.", "Positive", "A dull film.", "Negative")]
    dev = [
        SentimentPair(f"d{i}", f"Film {i} was fun.", "Positive", f"Film {i} was dull.", "Negative")
        for i in range(4)
    ]
    held = HeldOut(originals=[OriginalRecord("d0", "Film 0 was fun.", "Positive")],
                   human={}, human_labels={}, pool=4)  # fmt: skip
    stand_in = _StandIn(None, train, held, 0.9, 0.9, 0.8, dev)

    # The campaign's originals: the train originals and the held-out ones it perturbs.
    assert in_loop_training(stand_in, 0, seed=0) == [
        LabeledText("A fun film.", "Positive", group="t"),
        LabeledText("Film 0 was fun.", "Positive", group="d0"),
    ]
    rows = in_loop_training(stand_in, 2, seed=0)
    texts = [row.text for row in rows]
    assert [row.label for row in rows] == ["Positive", "Positive", "Negative", "Negative"]
    assert [row.counterfactual for row in rows] == [False, False, True, True]
    assert len(set(texts[2:])) == 2 and "Film 0 was dull." not in texts  # d0 is held out
    assert {row.text for row in in_loop_training(stand_in, 10, seed=0)[2:]} == {
        f"Film {i} was dull." for i in (1, 2, 3)
    }


def _evaluate_through(url: str, tmp_path: Path, *extra: str) -> int:
    return cli.main(
        [
            "evaluate",
            "--data",
            str(CAD),
            "--originals",
            "2",
            "--code",
            "negation",
            "--engine",
            "server",
            "--server-url",
            url,
            "--server-model",
            "lab-model",
            "--server-api",
            "completions",
            "--json",
            str(tmp_path / "figures.json"),
            "--quiet",
            *extra,
        ]
    )


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_evaluate_measures_a_generator_behind_an_inference_server(tmp_path, capsys):
    replies = completion(" film was a total bore.", " film was not fun.", " plot was dull.")
    with StubServer(lambda received: Reply(body=replies)) as stub:
        status = _evaluate_through(stub.url, tmp_path)
        posted = stub.posted()

    assert status == 0, capsys.readouterr().err
    # Every prompt went to the server, under the name it serves; nothing was decoded here.
    assert posted and {body["model"] for body in posted} == {"lab-model"}
    report = json.loads((tmp_path / "figures.json").read_text())
    assert report["model"] == f"lab-model at {stub.url}" and report["device"] == "server"
    ours = report["ours"]
    assert ours["originals"] == 2 and ours["candidates"] > 0 and ours["malformed"] == 0
    assert f"model lab-model at {stub.url}" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_evaluate_with_the_server_down_is_one_line_exit_1(tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"

    status = _evaluate_through(url, tmp_path, "--server-retries", "0")

    err = capsys.readouterr().err.strip().splitlines()
    assert status == cli.EXIT_SERVER
    assert len(err) == 1 and err[0].startswith("evaluate: ") and "127.0.0.1" in err[0]
    assert not (tmp_path / "figures.json").exists()


def test_evaluate_with_data_missing_its_files_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "sentiment_combined_paired").mkdir()

    status = cli.main(["evaluate", "--data", str(tmp_path), "--quiet"])

    err = capsys.readouterr().err.strip().splitlines()
    assert status == cli.EXIT_USAGE
    assert len(err) == 1 and err[0].startswith("evaluate: The CAD sentiment file is missing")


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_the_bench_runs_with_tiny_models_and_prints_its_result_line(tmp_path_factory, tmp_path):
    model = str(tiny_lm_directory(tmp_path_factory, "llama"))
    finished = _bench(
        "--model",
        model,
        "--fluency-model",
        model,
        "--device",
        "cpu",
        "--originals",
        "2",
        "--codes",
        "negation",
        "--json",
        str(tmp_path / "figures.json"),
    )

    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    result = finished.stdout.strip().splitlines()[-1]
    assert result.startswith("RESULT generation_quality leaks=")
    figures = dict(pair.split("=", 1) for pair in result.split()[2:])
    for key in ("malformed", "flip_selected", "fluency", "classifier_accuracy"):
        assert key in figures
    assert int(figures["leaks"]) >= 0
    assert 0.5 < float(figures["classifier_accuracy"]) <= 1
    assert 0 <= float(figures["malformed"]) <= 1
    assert (tmp_path / "figures.json").is_file()


def _bench(*options: str) -> subprocess.CompletedProcess:
    return run_bench("generation_quality.py", *options)


@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--backend", "server"], "bench: --backend server needs --base-url"),
        (["--base-url", "http://gpu:8000/v1"], "bench: --base-url needs --backend server"),
    ],
)
def test_the_bench_refuses_half_given_server_options_in_one_line(options, message):
    finished = _bench(*options)

    assert finished.returncode == 2
    assert finished.stderr.strip().splitlines() == [message]


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_the_bench_measures_a_generator_behind_an_inference_server(tmp_path_factory):
    fluency = str(tiny_lm_directory(tmp_path_factory, "llama"))
    replies = completion(" film was a total bore.", " film was not fun.", " plot was dull.")
    with StubServer(lambda received: Reply(body=replies)) as stub:
        finished = _bench(
            *("--backend", "server", "--base-url", stub.url, "--server-model", "lab-model"),
            *("--fluency-model", fluency, "--device", "cpu", "--originals", "2"),
            *("--codes", "negation"),
        )
        posted = stub.posted()

    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    assert posted and {body["model"] for body in posted} == {"lab-model"}
    assert f"model lab-model at {stub.url}" in finished.stdout
    assert finished.stdout.strip().splitlines()[-1].startswith("RESULT generation_quality leaks=0")
