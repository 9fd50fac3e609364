"""Commands: the command values every front end builds (`requests.py`), the one dispatch
(`handle.py`) to the rules that turn a command and a state into events (`commands.py`), the
workspace's settings (`config.py`) and a team's roles and names (`team.py`).
"""
