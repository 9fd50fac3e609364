"""The count of matches a default search leaves out because context shows them: the model's
(`self search`, `search.hidden`) and the index's (`GET /api/v1/search`'s `hidden`, counted up
to `HIDDEN_CAP`) agree on random logs and queries, and are 0 with every exposure asked for or
one named."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.data.workspaces import Data
from service.adapters.index import SearchIndex, query
from service.adapters.index.query import HIDDEN_CAP
from service.app.workspace import Workspace
from service.core.events.events import Event, Origin
from service.core.fold.fold import fold_all
from tests.integration.test_search_index import SYNTAX, WORDS, append
from tests.support.eventcheck import checked_tempdir
from tests.support.strategies import LABELS, search_logs, search_queries

HUMAN = Origin("human", True)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=search_logs(WORDS, LABELS, 30), data=st.data())
def test_self_search_and_the_index_count_the_same_matches_left_out(
    history: dict[str, list[Event]], data: st.DataObject
) -> None:
    with checked_tempdir() as tmp:
        team = Data(Path(tmp) / "data")
        team.add("team").close()
        for log, events in history.items():
            append(team.path("team"), log, events)
        texts = [e.text for events in history.values() for e in fold_all(events).entities.values() if e.live]
        with SearchIndex(team) as index, team.open("team") as store:
            index.refresh()
            ws = Workspace(store, "app", HUMAN)
            for _ in range(6):
                q = data.draw(search_queries(texts, SYNTAX))
                if not q.split():
                    continue  # the service asks for a word; the model's empty query lists every one
                shown = index.page(q, "app", ["team"], "search", 1, hidden=True)
                every = index.page(q, "app", ["team"], None, 1)
                hidden = ws.search_hidden(q, False, None)
                assert shown.hidden == min(hidden, HIDDEN_CAP), q
                assert shown.matched + hidden == every.matched, q
                with patch.object(query, "HIDDEN_CAP", 2):  # a broad query stops counting there
                    assert index.page(q, "app", ["team"], "search", 1, hidden=True).hidden == min(hidden, 2)
                assert ws.search_hidden(q, True, None) == 0 and ws.search_hidden(q, False, "full") == 0
