"""Proposes and ranks opposite-polarity replacements for one word with a causal language model.

Algorithm 1 (lines 8-10) asks a masked LM for 100 plausible fillers of the word's
slot and keeps those of the opposite polarity. With a causal LM the same takes two
steps: (1) propose the `proposal_count` lexicon words most likely to follow the text
before the slot, log p(word | prefix) summed over all of the word's tokens; (2) put
each into the sentence and rank by the log-probability of the whole sentence, which
also sees the words after the slot.

Step 1 searches the lexicon's token trie best-first: a partial word's score is an
upper bound of every word below it (log-probs only fall), so once the best
`proposal_count` entries are all whole words they are exactly the best words, found
after expanding only a few trie nodes instead of scoring thousands of words.
"""

import copy
import heapq
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from spacy.tokens import Doc, Token

from generation.fluency import sentence_logprobs
from generation.models import LoadedModel

TokenPath = tuple[int, ...]


@dataclass(frozen=True)
class RankedReplacement:
    word: str  # the lexicon word, lower case
    sentence: str  # the sentence with the word in place
    logprob: float  # log p(sentence) under the language model


def _start_token(lm: LoadedModel) -> int:
    tokenizer = lm.tokenizer
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if start is None:
        raise ValueError(f"the tokenizer of {lm.name!r} has neither a bos nor an eos token")
    return start


class PrefixScorer:
    """Next-token log-probs after a fixed prefix followed by short token paths.

    The prefix runs once; its key-value cache is copied for every batch of paths, so a
    path costs only its own few tokens.
    """

    @torch.inference_mode()
    def __init__(self, lm: LoadedModel, prefix: str) -> None:
        self.lm = lm
        self.prefix_ids = [
            _start_token(lm),
            *lm.tokenizer(prefix, add_special_tokens=False)["input_ids"],
        ]
        self.limit = getattr(lm.model.config, "max_position_embeddings", None)
        self._check_length(0)
        output = lm.model(
            input_ids=torch.tensor([self.prefix_ids], device=lm.device), use_cache=True
        )
        self.cache = output.cache
        self.after_prefix = output.logits[0, -1].float().log_softmax(-1).cpu()  # (V,)

    def _check_length(self, path_length: int) -> None:
        if self.limit is not None and len(self.prefix_ids) + path_length > self.limit:
            raise ValueError(f"the text before the word is longer than {self.lm.name!r} reads")

    @torch.inference_mode()
    def next_logprobs(self, paths: Sequence[TokenPath], batch_size: int = 32) -> torch.Tensor:
        """log p(next token | prefix + path) for each path, shape (len(paths), vocab), on CPU."""
        self._check_length(max((len(path) for path in paths), default=0))
        rows = {index: self.after_prefix for index, path in enumerate(paths) if not path}
        pending = [index for index, path in enumerate(paths) if path]
        pad = self.lm.tokenizer.pad_token_id if self.lm.tokenizer.pad_token_id is not None else 0
        device, width = self.lm.device, len(self.prefix_ids)
        for first in range(0, len(pending), batch_size):
            chunk = pending[first : first + batch_size]
            longest = max(len(paths[index]) for index in chunk)
            input_ids = torch.full((len(chunk), longest), pad, dtype=torch.long)  # (B, D)
            attention_mask = torch.ones((len(chunk), width + longest), dtype=torch.long)
            for row, index in enumerate(chunk):
                input_ids[row, : len(paths[index])] = torch.tensor(paths[index])
                attention_mask[row, width + len(paths[index]) :] = 0
            cache = copy.deepcopy(self.cache)  # the forward appends to it
            cache.batch_repeat_interleave(len(chunk))
            # Right padding keeps every real token at its unpadded position, and causal
            # attention never lets it see the pads after it.
            logits = self.lm.model(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                cache=cache,
                use_cache=True,
            ).logits  # (B, D, V)
            for row, index in enumerate(chunk):
                last = logits[row, len(paths[index]) - 1]  # (V,)
                rows[index] = last.float().log_softmax(-1).cpu()
        return torch.stack([rows[index] for index in range(len(paths))])


def propose_words(
    lm: LoadedModel,
    prefix: str,
    continuations: dict[str, str],
    count: int,
    *,
    batch_size: int = 32,
) -> list[tuple[str, float]]:
    """The `count` words w of `continuations` (word -> text that follows `prefix`) with the
    highest log p(text of w | prefix), best first, with that log-prob."""
    scorer = PrefixScorer(lm, prefix)
    words = list(continuations)
    encoded = lm.tokenizer([continuations[word] for word in words], add_special_tokens=False)
    children: dict[TokenPath, set[int]] = defaultdict(set)
    ending: dict[TokenPath, list[str]] = defaultdict(list)
    for word, ids in zip(words, encoded["input_ids"], strict=True):
        path = tuple(ids)
        for depth in range(len(path)):
            children[path[:depth]].add(path[depth])
        ending[path].append(word)
    complete: list[tuple[float, str]] = []
    frontier: dict[TokenPath, float] = {(): 0.0}
    to_expand: list[TokenPath] = [()]
    while to_expand:
        logprobs = scorer.next_logprobs(to_expand, batch_size)
        for path, row in zip(to_expand, logprobs, strict=True):
            score = frontier.pop(path)
            for token in children[path]:
                child = (*path, token)
                child_score = score + float(row[token])
                complete.extend((child_score, word) for word in ending.get(child, ()))
                if children.get(child):
                    frontier[child] = child_score
        best = heapq.nlargest(
            count,
            [(score, True, word) for score, word in complete]
            + [(score, False, path) for path, score in frontier.items()],
        )
        to_expand = [path for _, is_word, path in best if not is_word]
    best_words = heapq.nlargest(count, complete)
    return [(word, score) for score, word in best_words]


def rank_replacements(
    lm: LoadedModel,
    *,
    prefix: str,
    surfaces: dict[str, str],
    sentence_with: Callable[[str], str],
    proposal_count: int,
    batch_size: int = 32,
) -> list[RankedReplacement]:
    """The words of `surfaces` (word -> cased form) that best fill the slot after `prefix`,
    most fluent sentence first. `sentence_with(word)` builds the sentence with the word in."""
    if not surfaces:
        return []
    # 1. Propose: the slot's whitespace belongs to the word in byte-level BPE vocabularies.
    stem = prefix.rstrip()
    gap = prefix[len(stem) :]
    continuations = {word: gap + surface for word, surface in surfaces.items()}
    proposed = propose_words(lm, stem, continuations, proposal_count, batch_size=batch_size)
    # 2. Rank the proposals by the log-probability of the sentence they make.
    sentences = [sentence_with(word) for word, _ in proposed]
    logprobs = sentence_logprobs(lm, sentences, batch_size=batch_size)
    ranked = [
        RankedReplacement(word, sentence, logprob)
        for (word, _), sentence, logprob in zip(proposed, sentences, logprobs, strict=True)
    ]
    return sorted(ranked, key=lambda item: -item.logprob)


# Parts of speech a replacement may take in the replaced word's slot. A lexicon word can
# be several ("great", "disappointment" and "hate" are all in one list), and the language
# model, ranking what follows the prefix, gladly puts an adjective where a noun was
# ("What a disappointment..." -> "What a great..."). Participles are verbs or adjectives
# depending on the tagger's reading, so those two may stand for each other there.
_SLOT_KINDS = {"NOUN": "noun", "PROPN": "noun", "ADJ": "adjective", "VERB": "verb", "AUX": "verb"}
_PARTICIPLES = frozenset({"VBN", "VBG"})


def _fits(old: Token, new: Token) -> bool:
    old_kind, new_kind = _SLOT_KINDS.get(old.pos_, old.pos_), _SLOT_KINDS.get(new.pos_, new.pos_)
    if old_kind == new_kind:
        return True
    kinds = {old_kind, new_kind}
    return kinds == {"adjective", "verb"} and bool({old.tag_, new.tag_} & _PARTICIPLES)


def same_part_of_speech(
    ranked: Sequence[RankedReplacement],
    *,
    old: Token,
    start_of: Callable[[str], int],
    parse_many: Callable[[Sequence[str]], Sequence[Doc]],
    wanted: int,
) -> list[RankedReplacement]:
    """The first `wanted` of `ranked` whose word the parser reads as the part of speech of
    the word it replaces (`start_of(word)`: where the word starts in its sentence). Parsed a
    few at a time, best first, so a long list costs only what is needed."""
    kept: list[RankedReplacement] = []
    step = max(2 * wanted, 4)
    for begin in range(0, len(ranked), step):
        batch = ranked[begin : begin + step]
        for item, doc in zip(batch, parse_many([item.sentence for item in batch]), strict=True):
            start = start_of(item.word)
            new = next((token for token in doc if token.idx == start), None)
            if new is not None and _fits(old, new):
                kept.append(item)
                if len(kept) == wanted:
                    return kept
    return kept
