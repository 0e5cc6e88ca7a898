"""Our own batched decoding loop (`generation.decoding`) behind the engine interface.

It wins on CPU, where prefill dominates: shared few-shot examples and each original
are computed once, and rows leave the batch as soon as they are done.
"""

from generation.decoding import DecodingConfig, PromptParts, generate_continuations
from generation.engines.base import ResultHook


class LoopEngine:
    name = "loop"

    def __init__(self, lm) -> None:
        self.lm = lm
        self.tokenizer = lm.tokenizer
        self.model_name = lm.name

    def generate(
        self,
        prompts: list[str | PromptParts],
        max_new_tokens: list[int],
        config: DecodingConfig,
        *,
        answers_needed: list[int] | None = None,
        stop_at_newline: bool = False,
        on_result: ResultHook | None = None,
    ) -> list[list[str]]:
        return generate_continuations(
            self.lm,
            prompts,
            max_new_tokens,
            config,
            answers_needed=answers_needed,
            stop_at_newline=stop_at_newline,
            on_result=on_result,
        )
