"""The error root of the model and its two families.

`Invalid` is bad input (the CLI exits 1); `Refused` is a rule saying no (exit 2).
"""


class ModelError(Exception):
    """Root of every error the pure core raises."""


class Invalid(ModelError):
    """The input cannot be understood; the message says what to do instead."""


class Refused(ModelError):
    """The input is understood but a rule refuses it (cap, sanitize, evidence)."""
