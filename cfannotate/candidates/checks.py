"""System checks for the site's generation defaults (ids candidates.E001-E003, W001).

`generation.engines` loads torch, so the checks import it only when a default differs
from "auto with no server": a plain install starts without paying for it.
"""

from django.conf import settings
from django.core.checks import Error, Warning, register

# The option a ServerConfig problem names -> the variable that sets its site default.
SERVER_VARIABLES = {
    f"server_{key}": f"CFANNOTATE_INFERENCE_SERVER_{key.upper()}"
    for key in ("url", "model", "api", "api_key_env", "concurrency", "timeout", "retries")
}


@register()
def generation_defaults_check(app_configs, **kwargs):
    engine = settings.GENERATION_ENGINE
    server = settings.INFERENCE_SERVER
    if engine == "auto" and not any(value not in (None, "") for value in server.values()):
        return []
    from generation.engines import ENGINE_NAMES
    from generation.engines.base import server_problems

    problems = []
    if engine not in ENGINE_NAMES:
        problems.append(
            Error(
                f"CFANNOTATE_GENERATION_ENGINE is {engine!r}; choose one of "
                f"{', '.join(ENGINE_NAMES)}.",
                id="candidates.E001",
            )
        )
    # Only the defaults the site gives are checked; a campaign may give the rest.
    given = {
        "base_url" if key == "url" else key: value
        for key, value in server.items()
        if value not in (None, "")
    }
    problems_found = server_problems(given)
    if problems_found:
        message = "; ".join(problems_found) + "."
        # Longest first: "server_api" is the start of "server_api_key_env".
        for option in sorted(SERVER_VARIABLES, key=len, reverse=True):
            message = message.replace(option, SERVER_VARIABLES[option])
        problems.append(Error(f"Invalid inference-server default: {message}", id="candidates.E002"))
    if engine == "server" and not (server["url"] and server["model"]):
        problems.append(
            Warning(
                "CFANNOTATE_GENERATION_ENGINE is 'server' but the server's URL or model name "
                "is not set, so every Polyjuice entry would have to give both.",
                hint="Set CFANNOTATE_INFERENCE_SERVER_URL and CFANNOTATE_INFERENCE_SERVER_MODEL.",
                id="candidates.W001",
            )
        )
    return problems


@register()
def model_dtype_check(app_configs, **kwargs):
    """CFANNOTATE_DTYPE, read by `generation.models` in every process that loads a model:
    a bad value stops the start instead of failing each generation chunk."""
    from generation.precision import dtype_problem  # no torch: a web process starts without

    problem = dtype_problem()
    return [Error(problem, id="candidates.E003")] if problem else []
