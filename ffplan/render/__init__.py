"""Render stage: plan -> every file a deployment needs (being written)."""
