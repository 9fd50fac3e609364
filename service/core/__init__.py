"""The pure core: events in, state out. Imports no adapter and touches no filesystem
(`tests/unit/test_core_is_pure.py`).

- `events/`: the log's vocabulary, ids and order;
- `fold/`: the fold and the state it makes;
- `ledger/`: claims, decisions and questions, and their derived views;
- `gates/`: the rules every way in passes;
- `commands/`: command values and the rules that turn them into events;
- `projections/`: context, status, rows and search over a state;
- `interop/`: Docket ledgers in and out;
- `agent/`: coding agents' hook settings;
- `errors.py` (the one error root, `SelfhubError`) and `problems.py` (each error code's exit
  code and HTTP status).
"""
