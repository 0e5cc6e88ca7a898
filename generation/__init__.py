"""The counterfactual generation library: parsing, blanking, generators, filters, selection.

Plain Python, torch and spaCy; it never imports Django. The web app talks to it
through plain dataclasses (see `generation.records`).
"""
