"""The application layer: what a front end (the CLI today, the HTTP service next) calls.

`locate` finds the workspace store and the project once; `execute` runs a command value
(`service.model.requests`) in a store transaction on the log the model's rule names. Each
front end parses its input into a command, makes one call here and renders the events or
the error (`service.model.problems` maps each error code to an exit code and an HTTP status).
"""

from service.app.execute import execute
from service.app.locate import locate, store_root

__all__ = ["execute", "locate", "store_root"]
