"""selfhub: shared, typed, versioned state for teams of coding agents."""

__version__ = "0.1.0"
