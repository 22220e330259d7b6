"""Lens Shop: a small web shop whose bugs feed the demo organization."""
