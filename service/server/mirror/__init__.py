"""Workspaces the service keeps as mirrors of a git remote (their backend: GitHub, Gitea,
GitLab, any git server): made by a clone (`service/app/establish.py`), kept in step by the sync
protocol run on the workspace's writer thread (`round.py`) whenever a webhook, a poll or a write
asks for it, one sync in flight per workspace (`mirrors.py`).

Nothing is imported here: `mirrors.Mirrors`, `round.sync_live`.
"""
