"""The adapters: what the application layer stands on, each around the pure core.

- `store/`: a workspace store on disk (segments, the append gate, commits, the fold and hot
  caches, the lock, the clock, units of work);
- `sync/`: the sync protocol over any git remote (intake and push gates, merge, transports);
- `importers/`: Superself's logs into a store;
- `data/`: the team service's data directory (workspaces, backends, its SQLite files);
- `auth/`: users and API tokens;
- `index/`: the search index of every workspace;
- `checkout.py`: the facts of a code checkout the action gate and a work unit read.

The layers and the order the adapters may import each other in: `tests/unit/test_layers.py`.
"""
