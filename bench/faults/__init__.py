"""Fault scenarios against a real Weft, and the history checker of their records (docs/guarantees.md)."""
