"""Who the writer waits for before a commit (`service.live.writer.Returning`): the clients of
the last commit that had written in an earlier one within RETURN_S, and no one else."""

from __future__ import annotations

from service.live.writer import MAX_JOBS, RETURN_S, Returning


def test_a_client_is_expected_once_it_wrote_in_two_commits_close_together() -> None:
    returning = Returning()
    returning.committed(["a", "b"], 100.0)
    assert returning.expected == set(), "a first write says nothing about the next"
    returning.committed(["c"], 100.01)
    assert returning.expected == set(), "only the last commit's clients are waited for"
    returning.committed(["a", "c", None], 100.02)
    assert returning.expected == {"a", "c"}


def test_a_client_back_after_a_long_pause_or_on_new_connections_is_not_waited_for() -> None:
    returning = Returning()
    returning.committed(["a"], 100.0)
    returning.committed(["a"], 100.0 + RETURN_S)
    assert returning.expected == set()
    for n in range(50):  # a new connection for each post, as a CLI process makes
        returning.committed([("127.0.0.1", 40000 + n)], 200.0 + n / 1000)
        assert returning.expected == set()


def test_jobs_with_no_client_are_never_expected() -> None:
    returning = Returning()
    returning.committed([None, None], 1.0)
    returning.committed([None], 1.001)
    assert returning.expected == set()


def test_the_clients_remembered_stay_bounded() -> None:
    returning = Returning()
    for n in range(20 * MAX_JOBS):
        returning.committed([n], n * RETURN_S / 100)
    assert len(returning._seen) <= 4 * MAX_JOBS + 1
