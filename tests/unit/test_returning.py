"""Who the writer waits for before a commit (`service.live.writer.Returning`): the clients of
the last commit whose post came within LOOP_S of their previous answer, and no one else."""

from __future__ import annotations

from service.live.writer import LOOP_S, MAX_JOBS, Returning


def test_a_client_posting_again_right_after_its_answer_is_expected() -> None:
    returning = Returning()
    returning.committed([("a", 99.9), ("b", 99.9)], 100.0)
    assert returning.expected == set(), "a first post says nothing about the next"
    returning.committed([("c", 100.001)], 100.01)
    assert returning.expected == set(), "only the last commit's clients are waited for"
    returning.committed([("a", 100.002), ("c", 100.011), (None, 100.011)], 100.02)
    assert returning.expected == {"a", "c"}


def test_a_client_posting_now_and_then_or_on_new_connections_is_never_waited_for() -> None:
    returning = Returning()
    for n in range(10):  # two agents, each posting every half second
        returning.committed([("a", 100.0 + n / 2)], 100.0 + n / 2 + 0.01)
        assert returning.expected == set()
        returning.committed([("b", 100.25 + n / 2)], 100.25 + n / 2 + 0.01)
        assert returning.expected == set()
    for n in range(50):  # a new connection for each post, as a CLI process makes
        returning.committed([(("127.0.0.1", 40000 + n), 200.0 + n / 1000)], 200.0 + n / 1000)
        assert returning.expected == set()


def test_a_client_back_after_more_than_loop_s_is_not_expected() -> None:
    returning = Returning()
    returning.committed([("a", 1.0)], 1.01)
    returning.committed([("a", 1.01 + LOOP_S)], 1.1)
    assert returning.expected == set()


def test_the_clients_remembered_stay_bounded() -> None:
    returning = Returning()
    for n in range(20 * MAX_JOBS):
        returning.committed([(n, n * LOOP_S / 10)], n * LOOP_S / 10)
    assert len(returning._answered) <= 4 * MAX_JOBS + 1
