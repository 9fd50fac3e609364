"""Exchange with other tools: a Docket ledger in and out, decision rows out (`exchange.py`)."""
