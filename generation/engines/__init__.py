"""Decoding engines behind one interface (see `generation.engines.base`).

`loop` is our own batched loop (`generation.decoding`), best on CPU; `continuous` is
transformers' continuous batching (paged attention, rows replaced as they finish,
CUDA graphs on GPU), best on GPU; `server` is any OpenAI-compatible inference server.
`auto` picks `continuous` on CUDA and `loop` elsewhere.
"""

from generation.engines.base import ENGINE_NAMES, SERVER_APIS, Engine, ServerConfig

__all__ = ["ENGINE_NAMES", "SERVER_APIS", "Engine", "ServerConfig", "make_engine", "resolve_engine"]


def resolve_engine(name: str, device) -> str:
    """The engine `name` stands for on `device` (a torch.device or its name)."""
    if name not in ENGINE_NAMES:
        raise ValueError(f"Unknown engine {name!r}; choose from {', '.join(ENGINE_NAMES)}.")
    if name != "auto":
        return name
    return "continuous" if str(device).startswith("cuda") else "loop"


def make_engine(name: str, *, lm=None, server: ServerConfig | None = None) -> Engine:
    """An engine over a loaded model (`loop`, `continuous`, `auto`) or a server (`server`)."""
    if name == "server":
        if server is None:
            raise ValueError("The server engine needs server settings (URL and model name).")
        from generation.engines.server import ServerEngine

        return ServerEngine(server)
    if lm is None:
        raise ValueError(f"The {name} engine needs a loaded model.")
    resolved = resolve_engine(name, lm.device)
    if resolved == "continuous":
        from generation.engines.continuous import ContinuousEngine

        return ContinuousEngine(lm)
    from generation.engines.loop import LoopEngine

    return LoopEngine(lm)
