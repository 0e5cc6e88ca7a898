"""Polyjuice's engine options (`generation.engines`), named once for the settings form and
the candidate adapter, without importing the ML library (it loads torch)."""

ENGINE_GENERATOR = "polyjuice"  # the generator whose entry holds these options
SERVER_OPTIONS = (
    "server_url",
    "server_model",
    "server_api",
    "server_api_key_env",
    "server_concurrency",
    "server_timeout",
    "server_retries",
)
ENGINE_OPTIONS = ("engine", *SERVER_OPTIONS)
