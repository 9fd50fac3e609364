"""What the state is read as: bounded context for agents (`context.py`), status (`status.py`),
the workspace overview (`overview.py`), rows and record documents (`views.py`, `render.py`),
search ranking (`search.py`) and token estimates (`tokens.py`).
"""
