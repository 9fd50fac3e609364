"""Users, API tokens and web sessions of a team service behind one port (`port.Identity`): in
`DATA/auth.sqlite` (`tokens.Auth`) or in a PostgreSQL database (`postgres.PgIdentity`).

Nothing is imported here: `cli/common.py` maps `errors.AuthError` to an exit code on any
failing command, and that must not load SQLite.
"""
