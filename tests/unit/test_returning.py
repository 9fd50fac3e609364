"""Who the writer waits for before a commit (`service.server.live.writer.Returning`): the clients of
the last commit whose post came within LOOP_S of their previous answer, and no one else; and
how long (`gather`): while their answers are still going out, then while their posts come."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Hashable

import pytest

from service.server.live import writer
from service.server.live.jobs import Job
from service.server.live.writer import LOOP_S, MAX_JOBS, Returning, gather


def job(client: Hashable, queued: float = 0.0, answered: float = 0.0) -> Job:
    made = Job(lambda batch: None, lambda: None, client=client)
    made.queued, made.answered = queued, answered
    return made


def test_a_client_posting_again_right_after_its_answer_is_expected() -> None:
    returning = Returning()
    returning.committed([job("a", 99.9), job("b", 99.9)], 100.0)
    assert returning.expected == set(), "a first post says nothing about the next"
    returning.committed([job("c", 100.001)], 100.01)
    assert returning.expected == set(), "only the last commit's clients are waited for"
    returning.committed([job("a", 100.002), job("c", 100.011), job(None, 100.011)], 100.02)
    assert returning.expected == {"a", "c"}


def test_a_client_posting_now_and_then_or_on_new_connections_is_never_waited_for() -> None:
    returning = Returning()
    for n in range(10):  # two agents, each posting every half second
        returning.committed([job("a", 100.0 + n / 2)], 100.0 + n / 2 + 0.01)
        assert returning.expected == set()
        returning.committed([job("b", 100.25 + n / 2)], 100.25 + n / 2 + 0.01)
        assert returning.expected == set()
    for n in range(50):  # a new connection for each post, as a CLI process makes
        returning.committed([job(("127.0.0.1", 40000 + n), 200.0 + n / 1000)], 200.0 + n / 1000)
        assert returning.expected == set()


def test_a_client_back_after_more_than_loop_s_is_not_expected() -> None:
    returning = Returning()
    returning.committed([job("a", 1.0)], 1.01)
    returning.committed([job("a", 1.01 + LOOP_S)], 1.1)
    assert returning.expected == set()


def test_the_clients_remembered_stay_bounded() -> None:
    returning = Returning()
    for n in range(20 * MAX_JOBS):
        returning.committed([job(n, n * LOOP_S / 10)], n * LOOP_S / 10)
    assert len(returning._answered) <= 4 * MAX_JOBS + 1


def test_the_answers_sent_are_those_of_the_expected_clients_once_all_went_out() -> None:
    returning = Returning()
    returning.committed([job("a", 1.0), job("b", 1.0)], 1.01)
    last = [job("a", 1.02), job("b", 1.02), job("c", 1.02)]  # c posts for the first time
    returning.committed(last, 1.03)
    assert returning.sent() is None, "no answer of theirs went out yet"
    last[0].answered = 1.031
    last[2].answered = 1.05  # not expected: its answer is not waited for
    assert returning.sent() is None
    last[1].answered = 1.032
    assert returning.sent() == 1.032


def expecting(clients: range) -> tuple[Returning, list[Job]]:
    """A Returning expecting `clients`, whose answers have not gone out."""
    returning = Returning()
    now = time.monotonic()
    returning.committed([job(n, now - 0.02) for n in clients], now - 0.01)
    theirs = [job(n, now) for n in clients]
    returning.committed(theirs, now)
    assert returning.expected == set(clients)
    return returning, theirs


def test_a_commit_waits_for_answers_still_going_out_then_takes_the_posts_they_bring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sixteen clients in a loop, as two groups of eight: the first group's commit was just
    answered, and the event loop is still sending those answers when the writer takes the
    second group's posts, queued meanwhile. No post can come before its answer went out, so
    the writer waits (not stopping after IDLE_S) and then takes all sixteen into one commit.
    Stopping after IDLE_S instead took eight, and the groups kept alternating."""
    monkeypatch.setattr(writer, "GATHER_S", 5.0)
    monkeypatch.setattr(writer, "IDLE_S", 0.2)  # wide, for a loaded machine: the posts come 5 ms apart
    returning, theirs = expecting(range(8))
    waiting: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
    for n in range(8, 16):
        waiting.put(job(n))

    def answer_then_post() -> None:
        time.sleep(1.0)  # the event loop sends the answers: longer than IDLE_S
        for each in theirs:
            each.answered = time.monotonic()
            time.sleep(0.005)
        for n in range(8):
            waiting.put(job(n))
            time.sleep(0.005)

    sender = threading.Thread(target=answer_then_post)
    sender.start()
    jobs, ending = gather(waiting, waiting.get(), returning)
    sender.join()
    assert not ending
    assert sorted(j.client for j in jobs) == list(range(16))  # type: ignore[type-var]


def test_once_their_answers_went_out_a_commit_waits_no_more_than_idle_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The expected clients had their answers and do not post: the commit goes after IDLE_S,
    not GATHER_S; and an answer that never goes out holds it no longer than GATHER_S."""
    monkeypatch.setattr(writer, "GATHER_S", 1.0)
    monkeypatch.setattr(writer, "IDLE_S", 0.05)
    returning, theirs = expecting(range(3))
    for each in theirs:
        each.answered = time.monotonic()
    waiting: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
    start = time.monotonic()
    jobs, _ = gather(waiting, job(9), returning)
    assert len(jobs) == 1 and time.monotonic() - start < 0.5
    returning, _ = expecting(range(3))  # answers never sent
    start = time.monotonic()
    jobs, _ = gather(waiting, job(9), returning)
    took = time.monotonic() - start
    assert len(jobs) == 1 and 0.9 < took < 3.0, took
