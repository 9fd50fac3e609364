"""The service's live workspaces: each log folded once and kept in memory (`space.py`), one
writer thread per workspace committing jobs in groups (`writer.py`, `jobs.py`), the store port
over both (`view.py`: a command posted to the service runs through the application layer as
the CLI's does), writes from outside the service judged before they are folded (`outside.py`),
the change feed (`feed.py`) and every open workspace (`hub.py`).
"""
