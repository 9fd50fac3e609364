"""Users and API tokens of a team service, in `DATA/auth.sqlite` (`tokens.Auth`).

Nothing is imported here: `cli/common.py` maps `errors.AuthError` to an exit code on any
failing command, and that must not load SQLite.
"""
