import itertools

import pytest
import torch

from generation import neurologic
from generation.models import load_causal_lm
from generation.neurologic import (
    CausalLMScorer,
    Clause,
    NeuroLogicConfig,
    SearchRequest,
    constrained_beam_search,
    group_selection_order,
    literal_automaton,
    repeated_ngram_bans,
    within_tolerance,
)
from tests.generation.tiny_models import tiny_lm_directory

# A toy vocabulary: the scripted LM's logits are a table keyed by the last token.
EOS, PAD, A, B, X, Y, Z, W, START = range(9)
VOCAB = 10
UNLISTED = -10.0  # logit of every token a row of the table does not name


class ScriptedScorer:
    """A language model whose next-token logits depend only on the last token, as scripted."""

    def __init__(self, table: dict[int, dict[int, float]]):
        self.table = table
        self.rows: list[tuple[int, ...]] = []
        self.seen: set[tuple[int, ...]] = set()  # every row ever scored
        self.row_counts: list[int] = []  # rows scored per call, to see searches leave

    def start(self, input_ids, attention_mask):
        self.rows = [
            tuple(ids[mask.bool()].tolist())
            for ids, mask in zip(input_ids, attention_mask, strict=True)
        ]
        return self._logits()

    def advance(self, parents, tokens):
        self.rows = [
            self.rows[parent] + (token,)
            for parent, token in zip(parents.tolist(), tokens.tolist(), strict=True)
        ]
        return self._logits()

    def _logits(self):
        self.row_counts.append(len(self.rows))
        self.seen.update(self.rows)
        logits = torch.full((len(self.rows), VOCAB), UNLISTED)
        for index, row in enumerate(self.rows):
            for token, logit in self.table.get(row[-1], {}).items():
                logits[index, token] = logit
        return logits


# Left alone, the LM says "A" and stops; "X Y" is possible but unlikely.
PLAIN_TABLE = {
    START: {A: 0.0, X: -1.5},
    A: {EOS: 0.0, B: -1.0},
    B: {EOS: 0.0},
    X: {Y: -0.5, EOS: -3.0},
    Y: {EOS: 0.0},
    Z: {EOS: 0.0},
    W: {EOS: 0.0},
}
XY = Clause(literals=((X, Y),), label="x y")


def search(table, requests, **overrides):
    config = NeuroLogicConfig(**{"beam_size": 4, "num_return": 2, **overrides})
    scorer = ScriptedScorer(table)
    results = constrained_beam_search(scorer, requests, config, end_ids={EOS}, pad_id=PAD)
    return results, scorer


def contains(tokens, literal) -> bool:
    return any(
        tuple(tokens[i : i + len(literal)]) == literal
        for i in range(len(tokens) - len(literal) + 1)
    )


# --- the pieces ---------------------------------------------------------------------------------


def brute_force_matched(literal, tokens) -> int:
    """Longest prefix of `literal` that the token sequence ends with."""
    for k in range(min(len(literal), len(tokens)), 0, -1):
        if tuple(tokens[-k:]) == tuple(literal[:k]):
            return k
    return 0


@pytest.mark.parametrize("literal", [(1,), (1, 2), (1, 1, 2), (1, 2, 1, 2, 3), (2, 2, 2)])
def test_literal_automaton_tracks_the_longest_matched_prefix(literal):
    automaton = literal_automaton(literal)
    for tokens in itertools.product([1, 2, 3], repeat=6):
        matched = 0
        for end, token in enumerate(tokens, start=1):
            matched = automaton.get((matched, token), 0)
            assert matched == brute_force_matched(literal, tokens[:end]), (literal, tokens[:end])


def test_repeated_ngram_bans_the_token_that_would_repeat_a_bigram():
    history = torch.tensor([[5, 6, 5], [-1, 5, 6], [7, 7, 7]])
    banned = repeated_ngram_bans(history, 2, 10)
    assert banned[0].nonzero().flatten().tolist() == [6]  # "5 6" exists and the row ends in 5
    assert banned[1].nonzero().flatten().tolist() == []  # "6" never had a follower
    assert banned[2].nonzero().flatten().tolist() == [7]
    trigram = repeated_ngram_bans(torch.tensor([[1, 2, 3, 1, 2]]), 3, 10)
    assert trigram[0].nonzero().flatten().tolist() == [3]
    assert not repeated_ngram_bans(torch.tensor([[-1, 4]]), 2, 10).any()  # padding never bans


def test_within_tolerance_keeps_candidates_close_to_the_best_count():
    counts = torch.tensor([[3, 2, 1, 0, 5]])
    valid = torch.tensor([[True, True, True, True, False]])  # the 5 is invalid: not the best
    assert within_tolerance(counts, valid, 2).tolist() == [[True, True, True, False, False]]
    assert within_tolerance(counts, valid, 0).tolist() == [[True, False, False, False, False]]


def test_group_selection_takes_the_best_of_every_group_before_any_second_best():
    scores = torch.tensor([[-1.0, -2.0, -3.0, -4.0, -5.0, float("-inf")]])
    counts = torch.tensor([[2, 2, 2, 1, 0, 2]])
    order = group_selection_order(scores, counts)[0].tolist()
    # Round one: the best with 2, with 1 and with 0 clauses, by score; then the next with 2.
    assert order[:5] == [0, 3, 4, 1, 2]
    assert order[5] == 5  # -inf candidates come last


def test_bad_requests_and_configs_are_refused():
    with pytest.raises(ValueError):
        Clause(literals=())
    with pytest.raises(ValueError):
        Clause(literals=((),))
    with pytest.raises(ValueError):
        SearchRequest(prompt_ids=())
    with pytest.raises(ValueError):
        SearchRequest(prompt_ids=(START,), max_new_tokens=0)
    with pytest.raises(ValueError):
        NeuroLogicConfig(beam_size=2, num_return=3)
    with pytest.raises(ValueError):
        NeuroLogicConfig(sat_tolerance=-1)
    with pytest.raises(ValueError):
        constrained_beam_search(
            ScriptedScorer({}),
            [SearchRequest((START,))],
            NeuroLogicConfig(),
            end_ids=set(),
            pad_id=PAD,
        )


# --- the search on the scripted LM ---------------------------------------------------------------


def test_without_clauses_it_is_beam_search():
    [(best, *_)], _ = search(PLAIN_TABLE, [SearchRequest(prompt_ids=(START,), max_new_tokens=6)])
    assert best.token_ids == (A,) and best.end_id == EOS and best.satisfied == ()


def test_every_returned_hypothesis_satisfies_every_clause():
    request = SearchRequest(
        prompt_ids=(START,), clauses=(XY, Clause(((Z,), (B,)))), max_new_tokens=8
    )
    [hypotheses], _ = search(PLAIN_TABLE, [request])
    assert hypotheses
    for hypothesis in hypotheses:
        assert contains(hypothesis.token_ids, (X, Y))
        assert Z in hypothesis.token_ids or B in hypothesis.token_ids
        assert hypothesis.satisfied == (True, True)


def test_a_hypothesis_cannot_end_before_its_clauses_are_satisfied():
    # End-of-text is the likeliest token everywhere; W is the concept, never likely.
    table = {token: {EOS: 0.0, A: -2.0} for token in range(VOCAB)}
    request = SearchRequest(prompt_ids=(START,), clauses=(Clause(((W,),)),), max_new_tokens=5)
    [hypotheses], _ = search(table, [request])
    assert hypotheses and all(W in h.token_ids for h in hypotheses)


def test_candidates_that_can_no_longer_fit_a_clause_are_pruned():
    long_literal = (Clause(((X, Y, Z),)),)
    # "X Y Z" and the end token need 4 tokens.
    [too_short], _ = search(PLAIN_TABLE, [SearchRequest((START,), (), long_literal, 3)])
    assert too_short == []
    # With one beam, the likelier "A" would take the first of the 4 tokens and leave too
    # few: it is pruned at once, so the beam writes the literal instead.
    [just_enough], _ = search(
        PLAIN_TABLE, [SearchRequest((START,), (), long_literal, 4)], beam_size=1, num_return=1
    )
    assert [h.token_ids for h in just_enough] == [(X, Y, Z)]


def test_constraint_tokens_are_added_only_where_they_advance_an_open_clause():
    # Ending is the LM's favourite, so the 3 likeliest tokens leave a beam of 3 a free slot.
    ranked = {EOS: 0.0, A: -1.0, B: -2.0, X: -3.0, Y: -4.0, Z: -5.0, START: -6.0, PAD: -7.0}
    table = {token: ranked | {9: -8.0, W: -20.0} for token in range(VOCAB)}
    settings = {"beam_size": 3, "min_new_tokens": 0}
    # The prefix satisfies the only clause, so W, ranked last, is never forced again.
    request = SearchRequest((START,), prefix_ids=(W,), clauses=(Clause(((W,),)),), max_new_tokens=3)
    _, scorer = search(table, [request], **settings)
    assert not any(W in row[2:] for row in scorer.seen)
    # An open clause gets its token into the beam although the LM ranks it last.
    open_clause = SearchRequest((START,), clauses=(Clause(((W,),)),), max_new_tokens=3)
    _, scorer = search(table, [open_clause], **settings)
    assert any(W in row[1:] for row in scorer.seen)


def test_constraint_tokens_the_lm_ranks_too_low_are_not_forced():
    # Every row ranks W last of all ten tokens, below distinct logits for the other nine.
    ranked = {
        EOS: 0.0,
        A: -1.0,
        B: -2.0,
        X: -3.0,
        Y: -4.0,
        Z: -5.0,
        START: -6.0,
        PAD: -7.0,
        9: -8.0,
    }
    table = {token: ranked | {W: -20.0} for token in range(VOCAB)}
    request = SearchRequest(prompt_ids=(START,), clauses=(Clause(((W,),)),), max_new_tokens=4)
    # (No bans, which would lift W's rank by sinking the banned tokens below it.)
    unbanned = {"no_repeat_ngram_size": 0, "min_new_tokens": 0}
    [forced], _ = search(table, [request], prune_factor=VOCAB, **unbanned)
    assert forced and all(W in h.token_ids for h in forced)
    [pruned], _ = search(table, [request], prune_factor=VOCAB - 1, **unbanned)
    assert pruned == []


def test_beta_rewards_a_half_written_literal():
    # The LM prefers "A" to "X" by 0.5 nats; half of "X Y" written is worth beta * 0.5.
    table = PLAIN_TABLE | {START: {A: 0.0, X: -0.5}}
    request = SearchRequest(prompt_ids=(START,), clauses=(XY,), max_new_tokens=5)
    [greedy], _ = search(table, [request], beam_size=1, num_return=1, beta=0.0)
    [rewarded], _ = search(table, [request], beam_size=1, num_return=1, beta=1.25)
    assert greedy[0].token_ids[0] == A and contains(greedy[0].token_ids, (X, Y))
    assert rewarded[0].token_ids == (X, Y)


def test_tolerance_drops_hypotheses_too_far_behind():
    # With tolerance 0 and a beam of 1, the beam must jump at the clause at once.
    request = SearchRequest(prompt_ids=(START,), clauses=(Clause(((X,),)),), max_new_tokens=4)
    [strict], _ = search(PLAIN_TABLE, [request], beam_size=1, num_return=1, sat_tolerance=0)
    assert strict[0].token_ids[0] == X
    [tolerant], _ = search(PLAIN_TABLE, [request], beam_size=1, num_return=1, sat_tolerance=1)
    assert tolerant[0].token_ids[0] == A  # the likelier token may wait one step


def test_no_repeat_ngram_keeps_bigrams_unique():
    # The LM would loop "A B A B ..." and may stop after any B.
    table = {START: {A: 0.0}, A: {B: 0.0}, B: {A: 0.0, EOS: -0.5}}
    request = SearchRequest(prompt_ids=(START,), max_new_tokens=8)
    [looping], _ = search(table, [request], no_repeat_ngram_size=0, num_return=3)
    assert any(contains(h.token_ids, (A, B, A, B)) for h in looping)
    [unique], _ = search(table, [request], no_repeat_ngram_size=2, num_return=3)
    for hypothesis in unique:
        bigrams = list(zip(hypothesis.token_ids[:-1], hypothesis.token_ids[1:], strict=True))
        assert len(bigrams) == len(set(bigrams))


def test_a_half_written_literal_may_repeat_a_bigram_to_finish():
    # "X Y" is in the prefix; the literal "Z X Y" needs that bigram again to be finished.
    request = SearchRequest(
        prompt_ids=(START,), prefix_ids=(X, Y), clauses=(Clause(((Z, X, Y),)),), max_new_tokens=5
    )
    [hypotheses], _ = search(PLAIN_TABLE, [request])
    assert hypotheses and all(contains(h.token_ids[2:], (Z, X, Y)) for h in hypotheses)
    [unconstrained], _ = search(PLAIN_TABLE, [SearchRequest((START,), prefix_ids=(X, Y, Z, X))])
    assert all(h.token_ids[4:5] != (Y,) for h in unconstrained)  # without a literal: banned


def test_a_prefix_counts_toward_clauses_and_toward_repeats():
    request = SearchRequest(prompt_ids=(START,), prefix_ids=(X, Y), clauses=(XY,), max_new_tokens=4)
    [hypotheses], _ = search(PLAIN_TABLE | {Y: {EOS: -1.0, X: 0.0}}, [request])
    assert hypotheses and all(h.token_ids[:2] == (X, Y) for h in hypotheses)
    assert all(h.satisfied == (True,) for h in hypotheses)
    # "X Y" is already written, so the likeliest continuation "X" cannot be followed by "Y".
    assert all(h.token_ids[2] == X and h.token_ids[3:4] != (Y,) for h in hypotheses)


def test_batched_searches_match_searches_run_alone():
    requests = [
        SearchRequest(prompt_ids=(START,), clauses=(XY,), max_new_tokens=6),
        SearchRequest(prompt_ids=(W, W, START), max_new_tokens=2),
        SearchRequest(
            prompt_ids=(START,), prefix_ids=(Z,), clauses=(Clause(((B,),)), XY), max_new_tokens=8
        ),
    ]
    together, scorer = search(PLAIN_TABLE, requests, batch_size=3)
    alone = [search(PLAIN_TABLE, [request])[0][0] for request in requests]
    assert [[h.token_ids for h in hs] for hs in together] == [
        [h.token_ids for h in hs] for hs in alone
    ]
    for batched, single in zip(together, alone, strict=True):
        assert [h.score for h in batched] == pytest.approx([h.score for h in single])
    # Finished searches leave the batch: later steps score fewer rows than the full batch.
    assert scorer.row_counts[-1] < max(scorer.row_counts)


def test_cuda_out_of_memory_halves_the_batch(monkeypatch):
    calls = []
    real = neurologic._search_batch

    def flaky(scorer, requests, *args):
        calls.append(len(requests))
        if len(requests) > 1:
            raise torch.cuda.OutOfMemoryError("simulated")
        return real(scorer, requests, *args)

    monkeypatch.setattr(neurologic, "_search_batch", flaky)
    requests = [SearchRequest(prompt_ids=(START,), clauses=(XY,), max_new_tokens=5)] * 3
    results, _ = search(PLAIN_TABLE, requests, batch_size=4)
    assert calls[:3] == [3, 2, 1] and all(results)


# --- the search on tiny Hugging Face models ------------------------------------------------------


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_lm(request, tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


def test_tiny_models_batch_with_a_cache_like_alone_and_keep_their_clauses(tiny_lm):
    tokenizer = tiny_lm.tokenizer

    def ids(text):
        return tuple(tokenizer(text, add_special_tokens=False)["input_ids"])

    clauses = (Clause((ids(" music"), ids(" Music"))), Clause((ids(" acting was"),)))
    requests = [
        SearchRequest(ids("The movie was"), ids(" It"), clauses, max_new_tokens=12),
        SearchRequest(
            ids("Two dogs are running through a field"), (), clauses[:1], max_new_tokens=9
        ),
        SearchRequest(ids("A man"), ids(" Some people"), clauses[1:], max_new_tokens=10),
    ]
    # A random model rarely writes end-of-text, so a third of the vocabulary ends an output here.
    end_ids = {tokenizer.eos_token_id, *range(0, len(tokenizer), 3)} - {
        t for c in clauses for lit in c.literals for t in lit
    }
    config = NeuroLogicConfig(beam_size=5, num_return=2, batch_size=3)

    def run(batch):
        return constrained_beam_search(
            CausalLMScorer(tiny_lm.model),
            batch,
            config,
            end_ids=end_ids,
            pad_id=tokenizer.pad_token_id,
        )

    together = run(requests)
    alone = [run([request])[0] for request in requests]
    assert [[h.token_ids for h in hs] for hs in together] == [
        [h.token_ids for h in hs] for hs in alone
    ]
    assert any(together)
    for request, hypotheses in zip(requests, together, strict=True):
        for hypothesis in hypotheses:
            assert hypothesis.token_ids[: len(request.prefix_ids)] == request.prefix_ids
            for clause in request.clauses:
                assert any(contains(hypothesis.token_ids, literal) for literal in clause.literals)
