"""What the model may write: a per-row automaton over the vocabulary, applied before sampling.

The answer format needs exactly two bracketed markers, `[ANSWER]` and `[EMPTY]`, and
newlines; everything else the prompt holds (`[BLANK]`, `[SEP]`, `[negation]`,
`<|perturb|>`) and every special token of the tokenizer is off limits. A marker may
be spelt over several tokens (SmolLM2 writes `[EQ]` as `[`, `E`, `Q`, `]`), so a static
mask cannot stop it: each row carries a state, the part of an allowed marker it is
inside of ("" outside any), and a token is allowed only when its text continues that
state into an allowed marker or plain text. See `decoding.md` ("What the model may
write") for what each engine enforces.
"""

import functools
from dataclasses import dataclass

import torch
from transformers import LogitsProcessor

from generation.tokens import ANSWER, EMPTY

ALLOWED_MARKERS = (ANSWER, EMPTY)
# Every proper prefix of an allowed marker is a state a row can be in; "" is outside.
MARKER_STATES: tuple[str, ...] = (
    "",
    *dict.fromkeys(marker[:end] for marker in ALLOWED_MARKERS for end in range(1, len(marker))),
)
_STATE_INDEX = {state: index for index, state in enumerate(MARKER_STATES)}
_NEXT_CHARACTERS = {
    state: {marker[len(state)] for marker in ALLOWED_MARKERS if marker.startswith(state)}
    for state in MARKER_STATES[1:]
}
# Characters no answer may hold outside a marker: a stray "]" and the pipe of `<|...|>`.
FORBIDDEN_CHARACTERS = frozenset("]|")
BANNED = -1


def advance(state: str, text: str) -> str | None:
    """The state after writing `text` in `state`, or None when `text` breaks the format."""
    for character in text:
        if state:
            state += character
            if state in ALLOWED_MARKERS:
                state = ""
            elif state not in _STATE_INDEX:
                return None
        elif character == "[":
            state = "["
        elif character in FORBIDDEN_CHARACTERS:
            return None
    return state


def breaks_format(text: str) -> bool:
    """True when written text holds what the rule bans (a static mask let it by)."""
    return advance("", text) is None


def token_texts(tokenizer) -> list[str]:
    """Each vocabulary id's text, special tokens kept (computed once per tokenizer)."""
    cached = getattr(tokenizer, "_cfannotate_token_texts", None)
    if cached is None:
        cached = [
            tokenizer.decode([token_id], skip_special_tokens=False)
            for token_id in range(len(tokenizer))
        ]
        tokenizer._cfannotate_token_texts = cached
    return cached


def special_token_texts(tokenizer) -> frozenset[str]:
    """The text of every special or added special token (`<|im_start|>`, `<pad>`, `[SEP]`...)."""
    texts = set(getattr(tokenizer, "all_special_tokens", ()))
    added = getattr(tokenizer, "added_tokens_decoder", {}).values()
    texts |= {token.content for token in added if token.special}
    return frozenset(text for text in texts if text.strip())


def _special_ids(tokenizer) -> set[int]:
    ids = set(tokenizer.all_special_ids)
    ids |= {token_id for token_id, added in tokenizer.added_tokens_decoder.items() if added.special}
    return ids


@dataclass(frozen=True)
class WritingRule:
    """Which token each row may write next, given the marker state it is in.

    `transitions[state, token]` is the state after writing `token`, or BANNED. The
    ends (end-of-text ids) are allowed in every state: they end the row.
    """

    transitions: torch.Tensor  # (states, vocab) long

    @property
    def vocab_size(self) -> int:
        return self.transitions.shape[1]

    def to(self, device) -> "WritingRule":
        return WritingRule(self.transitions.to(device))

    @functools.cached_property
    def host_table(self) -> list[list[int]]:
        """`transitions` as lists, for stepping one row at a time on the host."""
        return self.transitions.tolist()

    @functools.cached_property
    def allowed_table(self) -> torch.Tensor:
        """(states, vocab) bool: whether each token may be written in each state."""
        return self.transitions != BANNED

    def allowed(self, states: torch.Tensor, width: int) -> torch.Tensor:
        """(rows, width) bool: what each row may write; ids past the vocabulary never."""
        allowed = self.allowed_table[states]  # (rows, vocab), a byte per entry
        if width > self.vocab_size:
            allowed = torch.nn.functional.pad(allowed, (0, width - self.vocab_size), value=False)
        return allowed[:, :width]

    def step(self, states: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """(rows,) the states after each row wrote its token (ids past the vocabulary: 0).

        `states`, `tokens` and the rule (see `to`) must be on one device."""
        inside = tokens < self.vocab_size
        following = self.transitions[states, tokens.clamp(max=self.vocab_size - 1)]
        return torch.where(inside, following, 0).clamp(min=0)  # a banned step restarts outside

    def always_banned(self) -> list[int]:
        """Ids banned in every state: what a static mask (suppress_tokens) can enforce."""
        return (self.transitions == BANNED).all(dim=0).nonzero().squeeze(-1).tolist()


def writing_rule(tokenizer, ends: frozenset[int] = frozenset()) -> WritingRule:
    """The rule for `tokenizer`, computed once per tokenizer and set of end ids.

    Banned in every state: special and added special tokens (pad, bos, unk, chat tokens
    like `<|im_start|>`, the prompt's `[SEP]` when the tokenizer has it as a token),
    except the end ids and an allowed marker that is a token of its own; and any token
    whose text cannot continue the state into plain text or an allowed marker.
    """
    cache = getattr(tokenizer, "_cfannotate_writing_rules", None)
    if cache is None:
        cache = tokenizer._cfannotate_writing_rules = {}
    if ends in cache:
        return cache[ends]
    texts = token_texts(tokenizer)
    forbidden = _special_ids(tokenizer) - set(ends)
    table = [[0] * len(texts) for _ in MARKER_STATES]  # (states, vocab), filled as lists: fast
    for token_id, text in enumerate(texts):
        plain = not any(character in text for character in "[]|")
        for index, state in enumerate(MARKER_STATES):
            if not state and plain:
                continue  # plain text outside a marker: stays outside
            if state and text and text[0] not in _NEXT_CHARACTERS[state]:
                table[index][token_id] = BANNED  # most tokens: fail at once
                continue
            following = advance(state, text)
            table[index][token_id] = BANNED if following is None else _STATE_INDEX[following]
        if token_id in forbidden and text not in ALLOWED_MARKERS:
            for row in table:
                row[token_id] = BANNED
    for end in ends:
        if 0 <= end < len(texts):
            for row in table:
                row[end] = 0
    transitions = torch.tensor(table, dtype=torch.long)
    rule = cache[ends] = WritingRule(transitions)
    return rule


class RuleLogitsProcessor(LogitsProcessor):
    """The rule for `generate()` (beam search): each row's state is replayed from its tokens,
    since beams are reordered between steps."""

    def __init__(self, rule: WritingRule, prompt_length: int) -> None:
        self.rule = rule
        self.prompt_length = prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.rule.transitions.device != input_ids.device:
            self.rule = self.rule.to(input_ids.device)
        states = torch.zeros(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
        for column in range(self.prompt_length, input_ids.shape[1]):
            states = self.rule.step(states, input_ids[:, column])
        return scores.masked_fill(~self.rule.allowed(states, scores.shape[-1]), float("-inf"))
