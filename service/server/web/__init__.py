"""The web view of the team service: server-rendered pages over the same read documents the
`/api/v1` routes answer (`service/server/api/reads.py`, `service/server/api/search.py`), signed in with an
API token exchanged for a server-side session kept in a cookie (`session.py`), live through a
cookie-authorized event stream; a writer's forms run the commands `POST …/commands` runs
(`acting.py`)."""
