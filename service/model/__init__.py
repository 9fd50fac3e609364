"""The pure core: events in, state out. Imports no adapter and touches no filesystem."""
