"""The gates every way in passes, one implementation each: sanitize (`sanitize.py`,
`sanitize_fast.py`, `sanitize_keys.py`, `secret_formats.py`, `controls.py`), the append and intake
gates' checks (`event_gate.py`, `segment_gate.py`), posted events' admission (`admit.py`), the
retention caps (`caps.py`), the action gate (`action.py`, with `shellcmd.py`, `globs.py`,
`destructive.py`) and a webhook's signature (`webhook.py`). ARCHITECTURE.md lists them.
"""
