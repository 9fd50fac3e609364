"""The team service's HTTP front end: litestar routes over the application layer — the
`/api/v1` reads and writes, health, the event stream, search, the git endpoint and webhooks —
and the guard, limits, logs and metrics around them. The app is built by the composition root
(`service/server/bootstrap.py`). Nothing is imported here, so `self --version` never loads
litestar.
"""
