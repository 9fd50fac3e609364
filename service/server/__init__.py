"""The team service: its composition root (`bootstrap.py`), the process that runs it
(`run.py`), and its front ends and the live workspaces behind them."""
