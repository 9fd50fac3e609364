"""The team service's HTTP front end: a litestar app over the application layer.

`app.build(data)` makes the app for a data directory; `run.serve` runs it under uvicorn.
Nothing is imported here, so `self --version` never loads litestar.
"""
