"""The log's vocabulary: the event envelope and payloads with their canonical bytes (`events.py`),
ids from a hybrid logical clock (`ids.py`), which copy of an id wins and what is after what
(`order.py`), events a client posts (`posted.py`), and the exported JSON Schema (`schema.py`).
"""
