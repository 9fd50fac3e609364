"""Several instances of the service on one git host, told of one another's changes through
one PostgreSQL database: `Cluster` (`members.py`) announces a workspace's new commit on a
channel (`NOTIFY`), listens on it (`LISTEN`) and calls back with what the others announce,
and holds the leader's lock (`pg_try_advisory_lock`) on its own connection, so that the
background work that must run once runs on one instance, and moves when that instance dies
(its connection drops, PostgreSQL releases the lock, another takes it at its next try).
`Turns` (`turns.py`) orders the instances' pushes of a workspace (`--replicated`): an advisory
lock per workspace, held for one push and granted in the order asked.

PostgreSQL unreachable: an announcement is skipped with a log line, no instance leads (each
then works alone, as a single instance does), and the connections are tried again until it is
back. psycopg is imported only here, and only when a URL is configured."""

from service.adapters.cluster.members import Cluster
from service.adapters.cluster.payload import Announcement

__all__ = ["Announcement", "Cluster"]
