"""cfannotate: human-verified counterfactual datasets, from generation to export."""
