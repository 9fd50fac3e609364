"""The git endpoint's protocol pieces without a server: pkt-lines read from a body as it
arrives, the commands of a push, and the report the git client reads."""

from __future__ import annotations

import asyncio

import pytest

from service.server.endpoint import pkt, receiving
from service.server.endpoint.errors import BadRequest

OLD, NEW = "a" * 40, "b" * 40


def body_of(*chunks: bytes) -> pkt.Body:
    queue = list(chunks)

    async def next_chunk() -> bytes | None:
        return queue.pop(0) if queue else None

    return pkt.Body(next_chunk)


def read(*chunks: bytes) -> receiving.Request:
    return asyncio.run(receiving.read_request(body_of(*chunks)))


def test_a_pkt_line_split_across_chunks_is_read_whole_and_the_rest_follows() -> None:
    whole = pkt.line(f"{OLD} {NEW} refs/heads/main\0report-status side-band-64k\n".encode()) + pkt.FLUSH
    request = read(whole[:3], whole[3:17], whole[17:] + b"PACK....")
    assert request.commands == [receiving.Command(OLD, NEW, "refs/heads/main")]
    assert request.sideband and request.wants_report and request.sends_pack


def test_the_pack_after_the_commands_is_handed_on_byte_for_byte() -> None:
    body = body_of(pkt.line(f"{OLD} {NEW} refs/heads/main\n".encode()) + pkt.FLUSH + b"PA", b"CK-data")

    async def run() -> bytes:
        await receiving.read_request(body)
        return b"".join([chunk async for chunk in body.rest()])

    assert asyncio.run(run()) == b"PACK-data"


def test_a_lone_flush_is_gits_probe_before_a_large_push() -> None:
    assert read(pkt.FLUSH).commands == []


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"zzzz", "not a pkt-line length"),
        (b"0003", "not one git sends"),
        (b"0010abc", "ended inside a pkt-line"),
        (pkt.line(b"shallow zz\n") + pkt.FLUSH, "is not a shallow line"),
        (
            pkt.line(f"{OLD} {NEW} refs/heads/main\n".encode()) + pkt.line(b"shallow " + OLD.encode()),
            "ref update",
        ),
        (pkt.line(b"not a command\n") + pkt.FLUSH, "is not a ref update"),
        (pkt.line(f"{OLD} {NEW} HEAD\n".encode()) + pkt.FLUSH, "is not a ref update"),
        (pkt.line(f"{OLD} {NEW} refs/heads/main\n".encode()), "ended inside its commands"),
    ],
)
def test_a_malformed_request_is_a_clear_bad_request(data: bytes, says: str) -> None:
    with pytest.raises(BadRequest, match=says):
        read(data)


def test_a_shallow_clones_cut_commits_come_before_its_commands() -> None:
    request = read(
        pkt.line(b"shallow " + OLD.encode())
        + pkt.line(f"{OLD} {NEW} refs/heads/main\0report-status atomic\n".encode())
        + pkt.FLUSH
    )
    assert request.shallow == (OLD,) and request.atomic
    assert request.commands == [receiving.Command(OLD, NEW, "refs/heads/main")]


def test_a_push_of_too_many_refs_is_refused_whole_after_its_commands_are_read() -> None:
    data = b"".join(pkt.line(f"{OLD} {NEW} refs/heads/b{n}\n".encode()) for n in range(65)) + pkt.FLUSH
    request = read(data)
    assert len(request.commands) == 65
    assert "at most" in (receiving.too_many(request) or "")


def test_the_report_goes_on_band_one_and_messages_on_band_two() -> None:
    request = read(
        pkt.line(f"{OLD} {NEW} refs/heads/main\0report-status side-band-64k\n".encode()) + pkt.FLUSH
    )
    report = receiving.Report(request)
    report.refuse(
        "refs/heads/main", "push-not-append", "refused: projects/a/log/000000.jsonl: an event changed"
    )
    encoded = report.encode()
    assert encoded.endswith(pkt.FLUSH)
    message = pkt.line(b"\x02refused: projects/a/log/000000.jsonl: an event changed\n")
    assert encoded.startswith(message)
    status = pkt.line(b"unpack ok\n") + pkt.line(b"ng refs/heads/main push-not-append\n") + pkt.FLUSH
    assert pkt.line(b"\x01" + status) in encoded


def test_without_side_band_the_report_is_plain_and_without_report_status_empty() -> None:
    plain = read(pkt.line(f"{OLD} {NEW} refs/heads/main\0report-status\n".encode()) + pkt.FLUSH)
    report = receiving.Report(plain)
    report.accept("refs/heads/main", "main is at bbbb")
    assert report.encode() == pkt.line(b"unpack ok\n") + pkt.line(b"ok refs/heads/main\n") + pkt.FLUSH
    silent = read(pkt.line(f"{OLD} {NEW} refs/heads/main\n".encode()) + pkt.FLUSH)
    assert receiving.Report(silent).encode() == b""


def test_the_advertisement_names_main_or_no_ref_at_all() -> None:
    held = receiving.advertisement(OLD)
    assert held.startswith(pkt.line(b"# service=git-receive-pack\n") + pkt.FLUSH)
    assert f"{OLD} refs/heads/main\0".encode() in held and b"no-thin" in held
    empty = receiving.advertisement(None)
    assert f"{receiving.ZERO} capabilities^{{}}\0".encode() in empty
