"""Events in, state out: the fold (`fold.py`, with a record's life in `records.py` and execution in
`work.py`), the folded shape (`state.py`), Superself's older kinds (`legacy.py`), its undo
(`undo.py`), proposals lapsing (`lapse.py`), one record's history (`history.py`) and the hot slice
context and status read (`hotslice.py`).
"""
