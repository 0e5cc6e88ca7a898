"""NeuroLogic-style constrained beam search: likely continuations that contain every CNF clause.

Lu et al. (NAACL 2021), as NeuroCounterfactuals uses it (seed 001, §2.3 and §3.1): each
clause is a disjunction of token sequences (literals) and is satisfied once one of them
appears in the output. Every step extends each beam by its likeliest tokens and by the
tokens that start or continue a literal, prunes candidates that can no longer satisfy
the constraints, keeps those within `sat_tolerance` clauses of the best, scores them by
log-probability plus a β reward for a half-written literal, and fills the beam group by
group (groups of candidates with the same number of satisfied clauses). A hypothesis may
end only once every clause is satisfied. The design note is `neurologic.md`.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)

NEG_INF = float("-inf")


@dataclass(frozen=True)
class Clause:
    """A disjunction: satisfied once any one of its token sequences appears in the output."""

    literals: tuple[tuple[int, ...], ...]
    label: str = ""  # what the clause stands for (a concept), for reports

    def __post_init__(self) -> None:
        if not self.literals or any(not literal for literal in self.literals):
            raise ValueError("A clause needs at least one literal, and no literal may be empty.")


@dataclass(frozen=True)
class SearchRequest:
    """One constrained search: what the model reads, how the output starts, what it must hold."""

    prompt_ids: tuple[int, ...]  # read by the model, never part of the output (the steer)
    prefix_ids: tuple[int, ...] = ()  # the output's forced opening (the 1g or np prompt)
    clauses: tuple[Clause, ...] = ()  # in conjunctive normal form: all must be satisfied
    max_new_tokens: int = 48

    def __post_init__(self) -> None:
        if not self.prompt_ids and not self.prefix_ids:
            raise ValueError("A search needs at least one prompt or prefix token to start from.")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1.")


@dataclass(frozen=True)
class NeuroLogicConfig:
    """Search settings; the defaults are NeuroCounterfactuals' (seed 001, §3.1)."""

    beam_size: int = 20  # live hypotheses per search
    length_penalty: float = 0.3  # finished score = log p / generated_length ** length_penalty
    no_repeat_ngram_size: int = 2  # no n-gram twice in the output (prefix included); 0 = off
    beta: float = 1.25  # reward for the fraction written of an unfinished multi-token literal
    sat_tolerance: int = 2  # keep candidates within this many clauses of the best one
    # NeuroLogic's alpha: a constraint token is a candidate only when it ranks among its row's
    # `prune_factor` likeliest tokens, so a concept is never forced where the LM finds it absurd.
    prune_factor: int = 500
    num_return: int = 3  # finished hypotheses returned per search
    min_new_tokens: int = 1  # no ending before this many generated tokens
    batch_size: int = 8  # searches per forward pass (each takes beam_size rows); halved on OOM

    def __post_init__(self) -> None:
        if self.beam_size < 1 or self.num_return < 1 or self.batch_size < 1:
            raise ValueError("beam_size, num_return and batch_size must be at least 1.")
        if self.num_return > self.beam_size:
            raise ValueError(f"num_return ({self.num_return}) > beam_size ({self.beam_size}).")
        if self.sat_tolerance < 0 or self.no_repeat_ngram_size < 0 or self.min_new_tokens < 0:
            raise ValueError("sat_tolerance, no_repeat_ngram_size and min_new_tokens are >= 0.")
        if self.prune_factor < 1:
            raise ValueError("prune_factor must be at least 1.")


@dataclass(frozen=True)
class Hypothesis:
    """A finished output: the prefix and generated tokens, and how it ended."""

    token_ids: tuple[int, ...]  # prefix + generated, without the end token
    end_id: int  # the token that ended it (end-of-text, or a newline token)
    score: float  # log_prob / generated_length ** length_penalty, the beam's ranking
    log_prob: float  # of the generated tokens, end token included
    satisfied: tuple[bool, ...]  # per clause of the request (all True: ending requires it)


class NextTokenScorer(Protocol):
    """What the search needs from a language model: next-token logits as rows move and grow."""

    def start(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Read left-padded prompts (rows, length); return next-token logits (rows, vocab)."""
        ...

    def advance(self, parents: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Row i continues old row parents[i] with tokens[i]; return logits (new_rows, vocab)."""
        ...


class CausalLMScorer:
    """A Hugging Face causal LM whose key/value cache follows the beams (no prompt re-read)."""

    def __init__(self, model) -> None:
        self.model = model
        self._cache = None
        self._mask: torch.Tensor | None = None  # (rows, past_length), 0 on left padding
        self._position: torch.Tensor | None = None  # (rows, 1), real tokens only

    @torch.no_grad()
    def start(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)  # (rows, length)
        output = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
        )
        self._cache = output.cache
        self._mask = attention_mask
        self._position = positions[:, -1:]
        return output.logits[:, -1, :]  # (rows, vocab)

    @torch.no_grad()
    def advance(self, parents: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        # index_select on every layer: copies rows for beams that share a parent, drops the rest.
        self._cache.reorder_cache(parents)
        self._mask = torch.cat([self._mask[parents], self._mask.new_ones((len(parents), 1))], 1)
        self._position = self._position[parents] + 1  # (rows, 1)
        output = self.model(
            input_ids=tokens[:, None],  # (rows, 1)
            attention_mask=self._mask,
            position_ids=self._position,
            cache=self._cache,
            use_cache=True,
        )
        self._cache = output.cache
        return output.logits[:, -1, :]  # (rows, vocab)


# ---------------------------------------------------------------------------------------------
# The pieces of one step, each a small function on tensors so it can be tested on its own.


def repeated_ngram_bans(history: torch.Tensor, n: int, vocab_size: int) -> torch.Tensor:
    """(rows, vocab) True where a token would write an n-gram its row already holds.

    `history` is (rows, length) with -1 on the left where a row is shorter.
    """
    rows, length = history.shape
    banned = torch.zeros((rows, vocab_size), dtype=torch.bool, device=history.device)
    if n < 1 or length < n:  # no whole n-gram written yet
        return banned
    windows = history.unfold(1, n, 1)  # (rows, length - n + 1, n)
    tail = history[:, length - (n - 1) :]  # (rows, n - 1): what the next token would follow
    matches = (windows[:, :, :-1] == tail[:, None, :]).all(-1) & (windows >= 0).all(-1)
    row_index, window_index = matches.nonzero(as_tuple=True)
    banned[row_index, windows[row_index, window_index, -1]] = True
    return banned


def within_tolerance(counts: torch.Tensor, valid: torch.Tensor, tolerance: int) -> torch.Tensor:
    """Valid candidates (G, N) that satisfy at least the best count of their search - tolerance."""
    best = counts.masked_fill(~valid, -1).amax(dim=1, keepdim=True)  # (G, 1)
    return valid & (counts >= best - tolerance)


def group_selection_order(scores: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """Candidate indices (G, N) in the order NeuroLogic fills a beam.

    Candidates are grouped by their number of satisfied clauses. The beam takes the
    best of every group first (those ordered by score), then the second best of every
    group, and so on, so no group crowds out the others. Candidates scored -inf come last.
    """
    candidates = scores.shape[1]
    order = scores.argsort(dim=1, descending=True, stable=True)  # (G, N)
    ordered_scores = scores.gather(1, order)
    ordered_counts = counts.gather(1, order).clamp(min=0)
    one_hot = F.one_hot(ordered_counts, int(ordered_counts.max()) + 1)  # (G, N, groups)
    rank_in_group = (one_hot.cumsum(1) * one_hot).sum(-1) - 1  # (G, N)
    rank_in_group = rank_in_group.masked_fill(ordered_scores == NEG_INF, candidates)
    # Stable: within one round of the rotation the score order from above is kept.
    return order.gather(1, rank_in_group.argsort(dim=1, stable=True))


def literal_automaton(literal: Sequence[int]) -> dict[tuple[int, int], int]:
    """KMP transitions {(matched, token): matched'} for the tokens of one literal.

    `matched` is the length of the longest prefix of the literal that ends the output;
    a token outside the literal resets it to 0, so only the literal's own tokens appear.
    """
    length = len(literal)
    failure = [0] * length  # failure[i]: longest proper border of literal[: i + 1]
    border = 0
    for i in range(1, length):
        while border and literal[i] != literal[border]:
            border = failure[border - 1]
        if literal[i] == literal[border]:
            border += 1
        failure[i] = border
    table = {}
    for matched in range(length + 1):
        for token in set(literal):
            k = matched if matched < length else failure[length - 1]
            while k and literal[k] != token:
                k = failure[k - 1]
            table[matched, token] = k + 1 if literal[k] == token else 0
    return table


@dataclass
class _Constraints:
    """The clauses of a batch of searches as padded tensors (G searches, L literals, C clauses)."""

    literal_length: torch.Tensor  # (G, L), 0 for padding
    literal_tokens: torch.Tensor  # (G, L, K), -1 for padding
    literal_clause: torch.Tensor  # (G, L), the clause a literal belongs to
    literal_to_clause: torch.Tensor  # (G, L, C) one-hot, float
    clause_real: torch.Tensor  # (G, C), False for padding
    tokens: torch.Tensor  # (G, V_c), every token of any literal, -1 for padding
    transition: torch.Tensor  # (G, L, K + 1, V_c): matched length after each constraint token
    automata: list[list[dict[tuple[int, int], int]]]  # per search, per literal

    @property
    def max_states(self) -> int:
        return self.transition.shape[2]


def _constraint_tensors(requests: Sequence[SearchRequest], device) -> _Constraints:
    literals = [
        [
            (clause_index, literal)
            for clause_index, c in enumerate(r.clauses)
            for literal in c.literals
        ]
        for r in requests
    ]
    groups = len(requests)
    n_literals = max(1, *(len(items) for items in literals))
    n_clauses = max(1, *(len(r.clauses) for r in requests))
    longest = max([1] + [len(lit) for items in literals for _, lit in items])
    vocab = [sorted({token for _, lit in items for token in lit}) for items in literals]
    n_tokens = max(1, *(len(tokens) for tokens in vocab))

    length = torch.zeros((groups, n_literals), dtype=torch.long)
    literal_tokens = torch.full((groups, n_literals, longest), -1, dtype=torch.long)
    clause_of = torch.zeros((groups, n_literals), dtype=torch.long)
    clause_real = torch.zeros((groups, n_clauses), dtype=torch.bool)
    tokens = torch.full((groups, n_tokens), -1, dtype=torch.long)
    transition = torch.zeros((groups, n_literals, longest + 1, n_tokens), dtype=torch.long)
    automata = []
    for g, (items, group_vocab) in enumerate(zip(literals, vocab, strict=True)):
        clause_real[g, : len(requests[g].clauses)] = True
        tokens[g, : len(group_vocab)] = torch.tensor(group_vocab, dtype=torch.long)
        column = {token: index for index, token in enumerate(group_vocab)}
        group_automata = []
        for index, (clause_index, literal) in enumerate(items):
            length[g, index] = len(literal)
            literal_tokens[g, index, : len(literal)] = torch.tensor(literal)
            clause_of[g, index] = clause_index
            automaton = literal_automaton(literal)
            group_automata.append(automaton)
            for (matched, token), following in automaton.items():
                transition[g, index, matched, column[token]] = following
        automata.append(group_automata)
    one_hot = F.one_hot(clause_of, n_clauses).float() * (length > 0)[..., None].float()
    return _Constraints(
        literal_length=length.to(device),
        literal_tokens=literal_tokens.to(device),
        literal_clause=clause_of.to(device),
        literal_to_clause=one_hot.to(device),
        clause_real=clause_real.to(device),
        tokens=tokens.to(device),
        transition=transition.to(device),
        automata=automata,
    )


def _prefix_state(request: SearchRequest, automata, n_literals: int, n_clauses: int):
    """Matched lengths and satisfied clauses after the forced prefix (np prompts hold concepts)."""
    matched = [0] * n_literals
    satisfied = [False] * n_clauses
    literal_clauses = [i for i, c in enumerate(request.clauses) for _ in c.literals]
    literals = [literal for c in request.clauses for literal in c.literals]
    for token in request.prefix_ids:
        for index, automaton in enumerate(automata):
            matched[index] = automaton.get((matched[index], token), 0)
            if matched[index] == len(literals[index]):
                satisfied[literal_clauses[index]] = True
    return matched, satisfied


# ---------------------------------------------------------------------------------------------
# The search.


@dataclass
class _Beams:
    """Live state of G searches with W rows each (W is 1 before the first step)."""

    search: torch.Tensor  # (G,) index of the request each search serves
    log_prob: torch.Tensor  # (G, W) cumulative log-prob of the generated tokens; -inf = empty
    history: torch.Tensor  # (G, W, H) prefix + generated tokens, -1 on the left
    matched: torch.Tensor  # (G, W, L) matched length of each literal
    satisfied: torch.Tensor  # (G, W, C) clause satisfied
    max_new: torch.Tensor  # (G,) token budget of each search


def literal_continuations(
    matched: torch.Tensor, satisfied: torch.Tensor, constraints: _Constraints, vocab_size: int
) -> torch.Tensor:
    """(G * W, vocab) True for the next token of every half-written literal of an open clause.

    `matched` is (G, W, L) and `satisfied` (G, W, C), as the beams hold them.
    """
    groups, width, literals = matched.shape
    length = constraints.literal_length[:, None, :]  # (G, 1, L)
    clause_of = constraints.literal_clause[:, None, :].expand(-1, width, -1)  # (G, W, L)
    open_literal = (matched > 0) & (matched < length) & ~satisfied.gather(-1, clause_of)
    spelled = constraints.literal_tokens[:, None].expand(-1, width, -1, -1)  # (G, W, L, K)
    position = matched.clamp(max=spelled.shape[-1] - 1)[..., None]
    following = spelled.gather(-1, position).squeeze(-1)  # (G, W, L)
    rows, columns = open_literal.view(groups * width, literals).nonzero(as_tuple=True)
    continuing = torch.zeros((groups * width, vocab_size), dtype=torch.bool, device=matched.device)
    continuing[rows, following.view(groups * width, literals)[rows, columns]] = True
    return continuing


@dataclass
class _Candidates:
    """Every extension considered in one step, (G, W, N) each."""

    tokens: torch.Tensor
    log_prob: torch.Tensor  # cumulative, after the token
    matched: torch.Tensor  # (G, W, N, L)
    satisfied: torch.Tensor  # (G, W, N, C)
    counts: torch.Tensor  # satisfied clauses
    reward: torch.Tensor  # largest fraction written of an open multi-token literal
    live: torch.Tensor  # may stay in the beam
    ends: torch.Tensor  # may end the hypothesis here (every clause satisfied)


def _candidates(
    beams: _Beams,
    logits: torch.Tensor,
    constraints: _Constraints,
    config: NeuroLogicConfig,
    end_ids: torch.Tensor,
    step: int,
) -> _Candidates:
    """Steps 1 to 4 of a beam step: expand, track the constraints, prune."""
    # 1. Bans: repeated n-grams, and ending before the minimum length.
    log_probs = _banned_log_probs(beams, logits, constraints, config, end_ids, step)
    # 2. Expansions: the likeliest tokens and the constraint tokens that rank well enough.
    tokens, token_lp, from_constraints, allowed = _expansions(log_probs, constraints, config)
    # 3. Constraint state after each candidate: KMP step of every literal, clause satisfaction.
    matched, satisfied, counts, reward, advances = _constraint_state(beams, tokens, constraints)
    allowed &= ~from_constraints | advances  # a constraint token must start or continue a literal
    # 4. Pruning: a hypothesis that cannot satisfy every clause in its remaining budget, or
    #    that would end with a clause unsatisfied, has irreversibly failed.
    feasible = _feasible(beams, matched, satisfied, constraints, step)
    log_prob = beams.log_prob[..., None] + token_lp  # (G, W, N)
    alive = allowed & (log_prob > NEG_INF)
    is_end = torch.isin(tokens, end_ids)
    every_clause = counts == constraints.clause_real.sum(-1)[:, None, None]
    return _Candidates(
        tokens=tokens,
        log_prob=log_prob,
        matched=matched,
        satisfied=satisfied,
        counts=counts,
        reward=reward,
        live=alive & ~is_end & feasible,
        ends=alive & is_end & every_clause,
    )


def _banned_log_probs(
    beams: _Beams,
    logits: torch.Tensor,
    constraints: _Constraints,
    config: NeuroLogicConfig,
    end_ids: torch.Tensor,
    step: int,
) -> torch.Tensor:
    """(G, W, vocab) log-probabilities with the bans applied: repeated n-grams, and ending
    before the minimum length. A token that continues a half-written literal is exempt from
    the n-gram ban: sub-word pieces of two concepts may share a bigram."""
    groups, width, _ = beams.history.shape
    vocab = logits.shape[-1]
    log_probs = logits.float().log_softmax(-1)  # (G * W, vocab)
    if config.no_repeat_ngram_size:
        flat_history = beams.history.reshape(groups * width, -1)
        banned = repeated_ngram_bans(flat_history, config.no_repeat_ngram_size, vocab)
        banned &= ~literal_continuations(beams.matched, beams.satisfied, constraints, vocab)
        log_probs = log_probs.masked_fill(banned, NEG_INF)
    if step < config.min_new_tokens:
        log_probs[:, end_ids] = NEG_INF
    return log_probs.view(groups, width, vocab)


def _expansions(log_probs: torch.Tensor, constraints: _Constraints, config: NeuroLogicConfig):
    """Each row's likeliest tokens, and every constraint token of its search that ranks within
    the row's top `prune_factor` (NeuroLogic's alpha).

    Returns (tokens, their log-probs, which came from the constraints, which are allowed),
    each (G, W, N).
    """
    groups, width, vocab = log_probs.shape
    top_lp, top_tokens = log_probs.topk(min(config.beam_size, vocab), dim=-1)  # (G, W, k)
    threshold = log_probs.topk(min(config.prune_factor, vocab), dim=-1).values[..., -1:]
    constraint_tokens = constraints.tokens[:, None, :].expand(groups, width, -1)  # (G, W, V_c)
    constraint_lp = log_probs.gather(-1, constraint_tokens.clamp(min=0))
    already_top = (constraint_tokens[..., None] == top_tokens[..., None, :]).any(-1)
    constraint_ok = (constraint_tokens >= 0) & (constraint_lp >= threshold) & ~already_top
    tokens = torch.cat([top_tokens, constraint_tokens.clamp(min=0)], dim=-1)  # (G, W, N)
    token_lp = torch.cat([top_lp, constraint_lp], dim=-1)
    from_constraints = torch.cat(
        [torch.zeros_like(top_tokens, dtype=torch.bool), torch.ones_like(constraint_ok)], -1
    )
    allowed = torch.cat([torch.ones_like(top_tokens, dtype=torch.bool), constraint_ok], -1)
    allowed &= token_lp > NEG_INF
    return tokens, token_lp, from_constraints, allowed


def _constraint_state(beams: _Beams, tokens: torch.Tensor, constraints: _Constraints):
    """The KMP step of every literal after each candidate token, and clause satisfaction.

    Returns (matched (G, W, N, L), satisfied (G, W, N, C), satisfied counts, the reward for
    a half-written literal, whether the token starts or continues a literal), the last three
    (G, W, N).
    """
    groups, width, n_candidates = tokens.shape
    literals = constraints.literal_length.shape[1]
    states, n_tokens = constraints.max_states, constraints.tokens.shape[1]
    hits = tokens[..., None] == constraints.tokens[:, None, None, :]  # (G, W, N, V_c)
    column = torch.where(hits.any(-1), hits.float().argmax(-1), -1)  # (G, W, N)
    literal_index = torch.arange(literals, device=tokens.device)  # (L,)
    # Index into transition viewed as (G, L * states * V_c): literal, matched length, token.
    flat_index = (
        (literal_index * states)[None, None, None, :] + beams.matched[:, :, None, :]
    ) * n_tokens + column.clamp(min=0)[..., None]  # (G, W, N, L)
    matched = constraints.transition.view(groups, -1).gather(1, flat_index.view(groups, -1))
    matched = matched.view(groups, width, n_candidates, literals)
    matched = matched.masked_fill((column < 0)[..., None], 0)
    length = constraints.literal_length[:, None, None, :]  # (G, 1, 1, L)
    completed = (matched == length) & (length > 0)
    newly = torch.einsum("gwnl,glc->gwnc", completed.float(), constraints.literal_to_clause) > 0
    satisfied = beams.satisfied[:, :, None, :] | newly  # (G, W, N, C)
    real = constraints.clause_real[:, None, None, :]
    counts = (satisfied & real).sum(-1)  # (G, W, N)
    clause_of = constraints.literal_clause[:, None, None, :].expand_as(matched)
    literal_done = satisfied.gather(-1, clause_of)  # (G, W, N, L)
    literal_open = (matched > 0) & (matched < length) & (length > 1) & ~literal_done
    fraction = matched.float() / length.clamp(min=1).float()
    reward = torch.where(literal_open, fraction, 0.0).amax(-1)  # (G, W, N)
    was_done = beams.satisfied.gather(
        -1, constraints.literal_clause[:, None, :].expand(-1, width, -1)
    )
    advances = ((matched > 0) & ~was_done[:, :, None, :] & (length > 0)).any(-1)
    return matched, satisfied, counts, reward, advances


def _feasible(
    beams: _Beams,
    matched: torch.Tensor,
    satisfied: torch.Tensor,
    constraints: _Constraints,
    step: int,
) -> torch.Tensor:
    """(G, W, N) whether every clause can still be satisfied within the remaining budget."""
    length = constraints.literal_length[:, None, None, :]  # (G, 1, 1, L)
    real = constraints.clause_real[:, None, None, :]
    still_needed = (length - matched).float().masked_fill(length == 0, float("inf"))
    per_clause = torch.where(
        constraints.literal_to_clause[:, None, None, :, :] > 0,  # (G, 1, 1, L, C)
        still_needed[..., None],
        torch.tensor(float("inf"), device=matched.device),
    ).amin(-2)  # (G, W, N, C): fewest tokens to satisfy each clause
    per_clause = per_clause.masked_fill(satisfied | ~real, 0.0)
    remaining = (beams.max_new - (step + 1)).float()[:, None, None]
    return per_clause.amax(-1) + 1 <= remaining  # the literals, then the end token


def _collect_finished(
    beams: _Beams,
    candidates: _Candidates,
    finished: list[list[Hypothesis]],
    requests: Sequence[SearchRequest],
    config: NeuroLogicConfig,
    step: int,
) -> None:
    """Move candidates that end here into their search's pool of finished hypotheses."""
    length = (step + 1) ** config.length_penalty
    for g, w, n in candidates.ends.nonzero().tolist():
        search = int(beams.search[g])
        history = beams.history[g, w]
        log_prob = float(candidates.log_prob[g, w, n])
        finished[search].append(
            Hypothesis(
                token_ids=tuple(history[history >= 0].tolist()),
                end_id=int(candidates.tokens[g, w, n]),
                score=log_prob / length,
                log_prob=log_prob,
                satisfied=tuple(
                    candidates.satisfied[g, w, n, : len(requests[search].clauses)].tolist()
                ),
            )
        )


def _select(candidates: _Candidates, config: NeuroLogicConfig, step: int):
    """Steps 5 and 6: tolerance, then the grouped selection of the next beam.

    Returns (G, beam) flat candidate indices and whether each chosen slot holds a hypothesis.
    """
    groups = candidates.tokens.shape[0]
    live = candidates.live.view(groups, -1)
    counts = candidates.counts.view(groups, -1)
    live = within_tolerance(counts, live, config.sat_tolerance)
    # Per-token log-probability (all candidates have the same length) plus β times progress,
    # so β weighs a literal's half-written progress against nats per token (Eq. 2).
    score = candidates.log_prob.view(groups, -1) / (step + 1)
    score = score + config.beta * candidates.reward.view(groups, -1)
    score = score.masked_fill(~live, NEG_INF)
    chosen = group_selection_order(score, counts)[:, : config.beam_size]  # (G, beam)
    return chosen, score.gather(1, chosen) > NEG_INF


def _advance_beams(beams: _Beams, candidates: _Candidates, chosen, occupied) -> _Beams:
    groups, width, n_candidates = candidates.tokens.shape
    parent = chosen // n_candidates  # (G, beam)

    def pick(tensor: torch.Tensor) -> torch.Tensor:  # (G, W, N, ...) -> (G, beam, ...)
        flat = tensor.reshape(groups, width * n_candidates, *tensor.shape[3:])
        index = chosen.view(groups, -1, *([1] * (tensor.dim() - 3)))
        return flat.gather(1, index.expand(-1, -1, *tensor.shape[3:]))

    tokens = pick(candidates.tokens)  # (G, beam)
    history = beams.history.gather(1, parent[..., None].expand(-1, -1, beams.history.shape[-1]))
    return _Beams(
        search=beams.search,
        log_prob=pick(candidates.log_prob).masked_fill(~occupied, NEG_INF),
        history=torch.cat([history, tokens[..., None]], dim=-1),  # (G, beam, H + 1)
        matched=pick(candidates.matched),
        satisfied=pick(candidates.satisfied),
        max_new=beams.max_new,
    )


def _search_done(
    beams: _Beams, finished: list[list[Hypothesis]], config: NeuroLogicConfig, step: int
) -> torch.Tensor:
    """(G,) True where a search can stop: out of budget, out of hypotheses, or out-scored.

    Out-scored is transformers' heuristic: the pool holds `num_return` hypotheses and the
    best live one, scored at its current length, is worse than the worst of them.
    """
    generated = step + 1
    out_of_budget = beams.max_new <= generated
    best_live = (beams.log_prob.amax(-1) / generated**config.length_penalty).tolist()
    done = []
    for g, search in enumerate(beams.search.tolist()):
        pool = sorted((h.score for h in finished[search]), reverse=True)
        out_scored = len(pool) >= config.num_return and best_live[g] < pool[config.num_return - 1]
        done.append(out_scored or best_live[g] == NEG_INF)
    return out_of_budget | torch.tensor(done, device=beams.log_prob.device)


def _start_beams(requests, constraints: _Constraints, device) -> _Beams:
    groups = len(requests)
    literals = constraints.literal_length.shape[1]
    clauses = constraints.clause_real.shape[1]
    longest_prefix = max(len(r.prefix_ids) for r in requests)
    history = torch.full((groups, 1, longest_prefix), -1, dtype=torch.long)
    matched = torch.zeros((groups, 1, literals), dtype=torch.long)
    satisfied = torch.zeros((groups, 1, clauses), dtype=torch.bool)
    for g, request in enumerate(requests):
        if request.prefix_ids:
            history[g, 0, longest_prefix - len(request.prefix_ids) :] = torch.tensor(
                request.prefix_ids
            )
        state, done = _prefix_state(request, constraints.automata[g], literals, clauses)
        matched[g, 0] = torch.tensor(state)
        satisfied[g, 0] = torch.tensor(done)
    return _Beams(
        search=torch.arange(groups, device=device),
        log_prob=torch.zeros((groups, 1), device=device),
        history=history.to(device),
        matched=matched.to(device),
        satisfied=satisfied.to(device),
        max_new=torch.tensor([r.max_new_tokens for r in requests], device=device),
    )


def _keep_searches(beams: _Beams, keep: torch.Tensor) -> _Beams:
    return _Beams(
        search=beams.search[keep],
        log_prob=beams.log_prob[keep],
        history=beams.history[keep],
        matched=beams.matched[keep],
        satisfied=beams.satisfied[keep],
        max_new=beams.max_new[keep],
    )


def _search_batch(
    scorer: NextTokenScorer,
    requests: Sequence[SearchRequest],
    config: NeuroLogicConfig,
    end_ids: torch.Tensor,
    pad_id: int,
    device,
) -> list[list[Hypothesis]]:
    """Run one batch of searches side by side; each leaves the batch when it is done."""
    # 1. The clauses as tensors, the prompts read once (one row per search).
    constraints = _constraint_tensors(requests, device)
    prompts = [list(r.prompt_ids) + list(r.prefix_ids) for r in requests]
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt) :] = torch.tensor(prompt)
        attention_mask[row, width - len(prompt) :] = 1
    logits = scorer.start(input_ids.to(device), attention_mask.to(device))  # (G, vocab)
    beams = _start_beams(requests, constraints, device)
    finished: list[list[Hypothesis]] = [[] for _ in requests]

    step = 0
    while True:
        # 2. Expand, track constraints and prune; finished hypotheses leave the beam.
        candidates = _candidates(beams, logits, constraints, config, end_ids, step)
        _collect_finished(beams, candidates, finished, requests, config, step)
        # 3. Tolerance and grouped selection fill the next beam.
        chosen, occupied = _select(candidates, config, step)  # (G, beam)
        beams = _advance_beams(beams, candidates, chosen, occupied)
        # 4. Searches that are done leave the batch, and their cache rows with them.
        done = _search_done(beams, finished, config, step)
        if bool(done.all()):
            break
        keep = (~done).nonzero().squeeze(-1)  # (G',) positions in this step's batch
        if bool(done.any()):
            beams = _keep_searches(beams, keep)
            constraints = _subset_constraints(constraints, keep)
        # The scorer holds this step's rows search-major: row = search * W + beam row.
        rows_before, n_candidates = candidates.tokens.shape[1], candidates.tokens.shape[2]
        parents = keep[:, None] * rows_before + chosen[keep] // n_candidates  # (G', beam)
        logits = scorer.advance(parents.view(-1), beams.history[:, :, -1].reshape(-1))
        step += 1

    return [_best(pool, config.num_return) for pool in finished]


def _subset_constraints(constraints: _Constraints, keep: torch.Tensor) -> _Constraints:
    return _Constraints(
        literal_length=constraints.literal_length[keep],
        literal_tokens=constraints.literal_tokens[keep],
        literal_clause=constraints.literal_clause[keep],
        literal_to_clause=constraints.literal_to_clause[keep],
        clause_real=constraints.clause_real[keep],
        tokens=constraints.tokens[keep],
        transition=constraints.transition[keep],
        automata=[constraints.automata[i] for i in keep.tolist()],
    )


def _best(pool: list[Hypothesis], count: int) -> list[Hypothesis]:
    """The `count` best distinct finished hypotheses."""
    best, seen = [], set()
    for hypothesis in sorted(pool, key=lambda h: h.score, reverse=True):
        if hypothesis.token_ids in seen:
            continue
        seen.add(hypothesis.token_ids)
        best.append(hypothesis)
        if len(best) == count:
            break
    return best


@torch.no_grad()
def constrained_beam_search(
    scorer: NextTokenScorer,
    requests: Sequence[SearchRequest],
    config: NeuroLogicConfig,
    *,
    end_ids: set[int],
    pad_id: int,
    device: torch.device | str = "cpu",
) -> list[list[Hypothesis]]:
    """Up to `config.num_return` finished hypotheses per request, best first, in request order.

    A request whose constraints cannot be met within its budget gets an empty list.
    Requests are batched `config.batch_size` at a time, longest prompts together; on
    CUDA an out-of-memory error halves the batch and retries.
    """
    if not requests:
        return []
    if not end_ids:
        raise ValueError("end_ids must name at least one token that ends an output.")
    device = torch.device(device)
    end_tensor = torch.tensor(sorted(end_ids), dtype=torch.long, device=device)
    order = sorted(
        range(len(requests)),
        key=lambda i: len(requests[i].prompt_ids) + len(requests[i].prefix_ids),
    )
    results: list[list[Hypothesis]] = [[] for _ in requests]
    batch_size, position = config.batch_size, 0
    while position < len(order):
        indices = order[position : position + batch_size]
        try:
            batch = _search_batch(
                scorer, [requests[i] for i in indices], config, end_tensor, pad_id, device
            )
        except torch.cuda.OutOfMemoryError:
            if batch_size == 1:
                raise
            torch.cuda.empty_cache()
            batch_size = max(1, batch_size // 2)
            logger.warning("CUDA out of memory; retrying with %d searches per batch", batch_size)
            continue
        for index, hypotheses in zip(indices, batch, strict=True):
            results[index] = hypotheses
        position += len(indices)
    return results
