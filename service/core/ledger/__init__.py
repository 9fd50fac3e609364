"""The typed ledger of claims, decisions and questions: its rules (`ledger.py`), derived views
(`derived.py`, `chains.py`), Docket's reading of a ledger (`docket.py`), the completion gate
(`completion.py`) and intended against realized work sets (`worksets.py`).
"""
