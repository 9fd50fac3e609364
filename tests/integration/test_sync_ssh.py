"""Sync over ssh: an `sshd` of the test's own on a high loopback port, keys made for the test,
the system's ssh client (dulwich runs it; selfhub never runs git itself).

Skipped where no sshd is installed (`.ci/run` installs openssh-server)."""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.sync import AuthFailed, Options, clone, remotes, sync
from tests.support.servers import free_port, stop, wait_port
from tests.support.sync_support import append, bare, files, new_store, same, track

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
KEYGEN = shutil.which("ssh-keygen")
FAST = Options(tries=8, timeout=10, pause=0.01, max_pause=0.05)

pytestmark = pytest.mark.skipif(
    not (os.path.exists(SSHD) and KEYGEN and shutil.which("ssh")),
    reason="no sshd/ssh here; .ci/run installs openssh-server",
)


def keygen(path: Path) -> Path:
    assert KEYGEN is not None
    subprocess.run([KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """An sshd on 127.0.0.1 that lets this user in with a key made here; yields (port, folder)."""
    folder = tmp_path / "ssh"
    folder.mkdir()
    host = keygen(folder / "host")
    user = keygen(folder / "id")
    (folder / "authorized_keys").write_text((folder / "id.pub").read_text())
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host}",
                f"AuthorizedKeysFile {folder / 'authorized_keys'}",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password",
                "StrictModes no",
                "UsePAM no",
                f"PidFile {folder / 'sshd.pid'}",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege-separation folder
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_port(port, proc)
        yield port, folder
    finally:
        stop(proc)
        if proc.stderr is not None:
            proc.stderr.close()
        assert user.exists()


def ssh_command(folder: Path, identity: Path) -> str:
    return (
        f"ssh -i {identity} -o IdentitiesOnly=yes -o UserKnownHostsFile={folder / 'known_hosts'} "
        "-o StrictHostKeyChecking=no -o LogLevel=ERROR"
    )


def test_two_replicas_over_ssh(
    tmp_path: Path, sshd: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, folder = sshd
    monkeypatch.setenv("SELF_SSH_COMMAND", ssh_command(folder, folder / "id"))
    remote = bare(tmp_path / "remote.git")
    url = f"ssh://{getpass.getuser()}@127.0.0.1:{port}{remote}"
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, url)
    assert sync(a, options=FAST).created
    b, cloned = clone(url, tmp_path / "b", FAST)
    track(b)
    assert cloned.bytes_received > 500 and cloned.bytes_sent > 0  # counted on ssh's pipes
    append(a, 2)
    append(b, 1)
    pushed = sync(a, options=FAST)
    assert pushed.pushed == 2 and pushed.bytes_sent > 500  # the pack too, not only the ref lines
    assert sync(b, options=FAST).pulled == 2
    assert sync(a, options=FAST).pulled == 1
    same(a, b)


def test_a_key_the_server_does_not_know_is_refused(
    tmp_path: Path, sshd: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, folder = sshd
    stranger = keygen(folder / "stranger")
    monkeypatch.setenv("SELF_SSH_COMMAND", ssh_command(folder, stranger))
    remote = bare(tmp_path / "remote.git")
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, f"ssh://{getpass.getuser()}@127.0.0.1:{port}{remote}")
    before = files(a)
    with pytest.raises(AuthFailed, match="Permission denied"):
        sync(a, options=FAST)
    assert files(a) == before
