"""The team service's data directory (DATA): its workspaces and its SQLite files.

```
DATA/selfhub-data         the marker: a data directory made (by the first workspace added)
DATA/workspaces/<name>/   one selfhub store per workspace (`self admin workspace add`)
DATA/backends/<name>.json  a workspace that mirrors a git remote: its URL, webhook secret's variable, poll
DATA/auth.sqlite          users and API tokens (service/adapters/auth)
DATA/index.sqlite         the search index of every workspace (service/adapters/index; rebuildable)
```

Nothing is imported here (see service/adapters/auth/__init__.py): `workspaces.Data`, `errors`.
"""
