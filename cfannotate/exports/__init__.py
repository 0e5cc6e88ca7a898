"""Exports of a campaign's results: contrast set, augmentation set, raw judgments."""
