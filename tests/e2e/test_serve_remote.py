"""Remote-backed workspaces on real processes: `self serve` keeping a mirror of a bare
repository served by `git daemon` (and by `git http-backend`, with a token from the
environment), a CLI on its own clone pushing with `self sync`, and push deliveries signed as
GitHub, Gitea, Forgejo and GitLab sign them.

Held here: a write through the API reaches the backend, and so does a CLI's write into DATA's
store once the service takes it (a read, or the tick noticing main moved); a push and its
webhook are visible through the API and the stream; the poll picks a push up without a
webhook; two services on one remote converge on one commit and serve one state; bad
deliveries are refused with nothing fetched, and logged without the secret; a dead backend:
writes acknowledged, the failure in the log and the metrics, the writes pushed once it is
back."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.test_serve_writes import Listener
from tests.support.selfrun import base_env, describe, run_self
from tests.support.servers import GIT, free_port, git_daemon
from tests.support.serving import Service, admin, token

WS, SLUG = "acme", "web"
HOOK_ENV = "SELFHUB_TEST_HOOK_SECRET"
SECRET = "s3cret-for-the-webhook-tests"
OLD_SECRET = "the-secret-being-rotated-out"
PROBLEM = "application/problem+json"
T = TypeVar("T")


def git(*args: str) -> str:
    assert GIT is not None
    proc = subprocess.run([GIT, *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def eventually(probe: Callable[[], T | None], seconds: float = 20.0, what: str = "") -> T:
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.1)


def round_logged(
    mirror: Mirror, trigger: str, match: Callable[[dict[str, Any]], bool] = lambda line: True
) -> list[dict[str, Any]]:
    """The `backend-sync` lines of rounds asked by `trigger` that `match`, waited for: a
    round logs once the search index took the move in, after the states and the backend."""
    lines = lambda: [e for e in mirror.events("backend-sync") if e["trigger"] == trigger and match(e)]  # noqa: E731
    try:
        return eventually(lines, what=f"a {trigger} round logged")
    except AssertionError as missing:
        raise AssertionError(f"{missing}; the rounds logged: {mirror.events('backend-sync')}") from None


class Backend:
    """A bare repository under `base`, served by `git daemon` (stoppable and restartable on
    its port)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.bare = base / f"{WS}.git"
        git("init", "--bare", "-q", "--initial-branch=main", str(self.bare))
        self.port = free_port()
        self.url = f"git://127.0.0.1:{self.port}/{WS}.git"
        self._stack = ExitStack()

    def start(self) -> None:
        self._stack.enter_context(git_daemon(self.base, self.port))

    def stop(self) -> None:
        self._stack.close()

    def head(self) -> str | None:
        proc = subprocess.run(
            [str(GIT), "--git-dir", str(self.bare), "rev-parse", "--verify", "-q", "refs/heads/main"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout.strip() or None

    def log_text(self) -> str:
        """The project log's segments on the backend's main."""
        head = self.head()
        if head is None:
            return ""
        names = git("--git-dir", str(self.bare), "ls-tree", "-r", "--name-only", head).split()
        folder = f"projects/{SLUG}/log/"
        return "".join(
            git("--git-dir", str(self.bare), "show", f"{head}:{n}") for n in names if n.startswith(folder)
        )


class Cli:
    """A person's `self` on a clone of the backend."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(self, *args: str) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.root), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def head(self) -> str:
        return git("-C", str(self.root), "rev-parse", "main").strip()


def seeded(tmp: Path, backend: Backend) -> Cli:
    """The workspace published on the backend by a CLI: `self init`, a project, a sync."""
    cli = Cli(tmp / "cli-store")
    proc = run_self(("init", str(cli.root)), base_env())
    assert proc.returncode == 0, describe(proc)
    cli.run("project", "add", SLUG, "--desc", "the web app")
    cli.run("remote", "add", backend.url)
    cli.run("sync")
    return cli


class Mirror:
    """`self serve` over a DATA whose workspace WS mirrors the backend."""

    def __init__(self, tmp: Path, url: str, poll: float = 60, env: dict[str, str] | None = None) -> None:
        self.data = tmp / "data"
        made = admin(
            self.data, "workspace", "add", WS, "--remote", url, "--webhook-secret-env", HOOK_ENV,
            "--poll", str(poll), "--json",
        )  # fmt: skip
        self.created = json.loads(made)
        admin(self.data, "workspace", "add", "hosted")  # one the service hosts itself
        admin(self.data, "user", "add", "ann")
        self.writer = token(self.data, "ann", WS, "writer")
        self.reader = token(self.data, "ann", WS, "reader")
        self.log = tmp / "serve.log"
        hook_env = {HOOK_ENV: SECRET, HOOK_ENV + "_PREVIOUS": OLD_SECRET}
        self.service = Service(self.data, self.log, env=hook_env | (env or {}))
        self.service.wait("/readyz")

    def post(self, text: str) -> httpx.Response:
        body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}]}
        with self.service.client(self.writer) as client:
            answer = client.post(f"/api/v1/workspaces/{WS}/events", json=body)
        assert answer.status_code == 201, answer.text
        return answer

    def texts(self) -> set[str]:
        with self.service.client(self.reader) as client:
            answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"})
        assert answer.status_code == 200, answer.text
        return {row["text"] for row in answer.json()}

    def state(self) -> Any:
        with self.service.client(self.reader) as client:
            return client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"}).json()

    def head(self) -> str:
        return git("-C", str(self.data / "workspaces" / WS), "rev-parse", "main").strip()

    def deliver(self, body: bytes, headers: dict[str, str], ws: str = WS) -> httpx.Response:
        with httpx.Client(base_url=self.service.url, timeout=30) as client:
            return client.post(f"/hooks/{ws}", content=body, headers=headers)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("event") == name]

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        answer = httpx.get(self.service.url + "/metrics", timeout=10)
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples
        }

    def syncs(self, trigger: str, outcome: str = "ok") -> float:
        key = ("selfhub_backend_syncs_total", (("outcome", outcome), ("trigger", trigger), ("workspace", WS)))
        return self.samples().get(key, 0.0)

    def stop(self) -> None:
        self.service.stop()


def push_body(after: str, ref: str = "refs/heads/main") -> bytes:
    return json.dumps({"ref": ref, "after": after, "repository": {"full_name": "team/acme"}}).encode()


def hexmac(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signed(host: str, body: bytes, secret: str = SECRET, delivery: str | None = None) -> dict[str, str]:
    """The headers `host` sends with a push delivery of `body`."""
    delivery = delivery or str(uuid.uuid4())
    json_type = {"Content-Type": "application/json"}
    if host == "github":
        return json_type | {
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": "sha256=" + hexmac(secret, body),
        }
    if host == "gitea":
        return json_type | {
            "X-Gitea-Event": "push",
            "X-Gitea-Delivery": delivery,
            "X-Gitea-Signature": hexmac(secret, body),
        }
    if host == "forgejo":
        sign = hexmac(secret, body)  # Forgejo sends Gitea's headers too
        forgejo = {"X-Forgejo-Event": "push", "X-Forgejo-Delivery": delivery, "X-Forgejo-Signature": sign}
        return (
            json_type
            | forgejo
            | {"X-Gitea-Event": "push", "X-Gitea-Delivery": delivery, "X-Gitea-Signature": sign}
        )
    assert host == "gitlab"
    return json_type | {
        "X-Gitlab-Event": "Push Hook",
        "X-Gitlab-Event-UUID": delivery,
        "X-Gitlab-Token": secret,
    }


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    found = Backend(tmp_path / "git")
    found.start()
    try:
        yield found
    finally:
        found.stop()


@contextmanager
def mirrored(tmp: Path, url: str, poll: float = 60, env: dict[str, str] | None = None) -> Iterator[Mirror]:
    mirror = Mirror(tmp, url, poll, env)
    try:
        yield mirror
    finally:
        mirror.stop()


def test_a_write_through_the_api_reaches_the_backend(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        assert mirror.created["remote"] == backend.url and mirror.created["webhook"] == f"/hooks/{WS}"
        assert mirror.head() == cli.head(), "cloned at the start"
        # the start round over first: a write during it is pushed by it, not by a round of its own
        eventually(lambda: mirror.syncs("start") >= 1, what="the start round")
        ids = mirror.post("written over HTTP").json()["ids"]
        eventually(lambda: ids[0] in backend.log_text(), what="the posted event on the backend")
        eventually(lambda: backend.head() == mirror.head(), what="the backend at the service's head")
        cli.run("sync")
        assert "written over HTTP" in cli.run("state", "list", "--all", "--json")
        round_logged(mirror, "write", lambda line: line["pushed"] == 1)


def test_a_push_and_its_webhook_show_through_the_api_and_the_stream(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        listener = Listener(mirror.service, mirror.reader)
        time.sleep(0.2)
        cli.run("decide", "render on the server", "--why", "a fast first paint")
        cli.run("sync")
        body = push_body(cli.head())
        answer = mirror.deliver(body, signed("github", body))
        assert answer.status_code == 202, answer.text
        assert answer.json()["outcome"] in ("accepted", "coalesced")
        eventually(lambda: "render on the server" in mirror.texts(), seconds=10, what="the pushed decision")
        got = listener.until(1)
        listener.close()
        assert [d["payload"]["text"] for _, d in got] == ["render on the server"], got
        assert mirror.head() == cli.head()
        round_logged(mirror, "webhook")
        hooks = mirror.events("webhook")
        assert hooks and hooks[-1]["host"] == "github" and hooks[-1]["outcome"] in ("accepted", "coalesced")


@pytest.mark.parametrize("host", ["gitea", "forgejo", "gitlab"])
def test_each_hosts_delivery_is_accepted(tmp_path: Path, backend: Backend, host: str) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        cli.run("goal", f"a goal pushed under {host}")
        cli.run("sync")
        body = push_body(cli.head())
        answer = mirror.deliver(body, signed(host, body))
        assert answer.status_code == 202, answer.text
        eventually(lambda: f"a goal pushed under {host}" in mirror.texts(), seconds=10, what=host)
        assert mirror.events("webhook")[-1]["host"] == host


def test_the_previous_secret_is_accepted_during_a_rotation(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        cli.run("goal", "pushed while rotating")
        cli.run("sync")
        body = push_body(cli.head())
        assert mirror.deliver(body, signed("github", body, OLD_SECRET)).status_code == 202
        eventually(lambda: "pushed while rotating" in mirror.texts(), seconds=10, what="the push")


def test_other_branches_and_the_services_own_pushes_fetch_nothing(tmp_path: Path, backend: Backend) -> None:
    seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        mirror.post("ours")
        eventually(lambda: backend.head() == mirror.head(), what="our push")
        time.sleep(0.5)
        before = mirror.syncs("webhook")
        own = push_body(mirror.head())
        other = push_body("f" * 40, ref="refs/heads/feature")
        for body in (own, other):
            answer = mirror.deliver(body, signed("github", body))
            assert answer.status_code == 202 and answer.json()["outcome"] == "ignored", answer.text
        assert [a["reason"] for a in mirror.events("webhook")[-2:]] == ["own-push", "other-branch"]
        time.sleep(1)
        assert mirror.syncs("webhook") == before


def test_the_poll_picks_up_a_push_without_a_webhook(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url, poll=1) as mirror:
        cli.run("goal", "found by the poll")
        cli.run("sync")
        eventually(lambda: "found by the poll" in mirror.texts(), seconds=15, what="the poll")
        assert mirror.head() == cli.head()
        round_logged(mirror, "poll", lambda line: bool(line["pulled"]))


@pytest.mark.parametrize("read", [True, False], ids=["read-after", "nothing-reads"])
def test_a_write_into_the_store_from_outside_reaches_the_backend(
    tmp_path: Path, backend: Backend, read: bool
) -> None:
    """A CLI on the service's machine writes into DATA's store: once the service takes it (a
    read, or the tick that notices main moved), a round pushes it — no poll (0), no API write."""
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url, poll=0) as mirror:
        eventually(lambda: mirror.syncs("start") >= 1, what="the start round")
        on_data = Cli(mirror.data / "workspaces" / WS)
        on_data.run("goal", "written on the service's machine")
        if read:
            assert "written on the service's machine" in mirror.texts(), "folded before the answer"
        text = "written on the service's machine"
        eventually(lambda: text in backend.log_text(), seconds=10, what="the CLI's write on the backend")
        eventually(lambda: backend.head() == mirror.head(), what="the backend at the service's head")
        round_logged(mirror, "outside", lambda line: line["pushed"] == 1)
        assert mirror.syncs("poll") == 0 and mirror.syncs("write") == 0
        assert "written on the service's machine" in mirror.texts()
        cli.run("sync")
        assert "written on the service's machine" in cli.run("goal", "list", "--json")


def test_a_refused_outside_write_asks_for_no_round(tmp_path: Path, backend: Backend) -> None:
    """An edited event committed into DATA's store is refused by the push gate when taken:
    main is put back, and nothing goes to the backend."""
    seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url, poll=0) as mirror:
        eventually(lambda: mirror.syncs("start") >= 1, what="the start round")
        store = mirror.data / "workspaces" / WS
        before, remote = mirror.head(), backend.head()
        segment = store / "workspace" / "log" / "000000.jsonl"
        segment.write_text(segment.read_text().replace("the web app", "the web APP"))
        git("-C", str(store), "-c", "user.name=t", "-c", "user.email=t@localhost",
            "commit", "-q", "-am", "an edited event")  # fmt: skip
        mirror.texts()  # a read takes it
        eventually(lambda: mirror.head() == before, what="main put back")
        time.sleep(1.5)
        assert backend.head() == remote
        assert mirror.syncs("outside") == 0
        samples = mirror.samples().items()
        outcomes = {dict(k[1])["outcome"]: v for k, v in samples if k[0] == "selfhub_outside_writes_total"}
        assert outcomes and set(outcomes) != {"accepted"}, f"counted as refused: {outcomes}"


@pytest.mark.slow
def test_two_services_on_one_remote_converge(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with (
        mirrored(tmp_path / "one", backend.url, poll=2) as one,
        mirrored(tmp_path / "two", backend.url, poll=2) as two,
    ):
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            written = list(pool.map(lambda i: (one if i % 2 else two).post(f"note {i}"), range(24)))
        assert len(written) == 24
        cli.run("goal", "pushed by the CLI meanwhile")
        cli.run("sync")
        for mirror in (one, two):  # the host tells both
            body = push_body(cli.head())
            assert mirror.deliver(body, signed("github", body)).status_code == 202

        def converged() -> bool:
            head = backend.head()
            return (
                head is not None and one.head() == head and two.head() == head and one.state() == two.state()
            )

        eventually(converged, seconds=40, what="both services and the backend on one commit")
        texts = one.texts()
        assert {f"note {i}" for i in range(24)} | {"pushed by the CLI meanwhile"} <= texts
        assert one.state() == two.state()
        cli.run("sync")
        assert cli.head() == backend.head()


@pytest.mark.slow
def test_bad_deliveries_are_refused_and_fetch_nothing(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        cli.run("goal", "never fetched by a bad delivery")
        cli.run("sync")
        body = push_body(cli.head())
        good = signed("github", body)
        replayed = signed("github", body, delivery="the-same-delivery")
        assert mirror.deliver(body, replayed).status_code == 202
        time.sleep(0.5)  # what the good one asked for is done
        eventually(lambda: mirror.syncs("webhook") >= 1, what="the good delivery's fetch")
        before_syncs, head = mirror.syncs("webhook"), mirror.head()
        cli.run("goal", "pushed after")
        cli.run("sync")
        body = push_body(cli.head())
        no_signature = {k: v for k, v in good.items() if not k.startswith("X-Hub")}
        cases = {
            "bad signature": (WS, body, signed("github", body, "a wrong secret"), 401),
            "body changed": (WS, body + b" ", signed("github", body), 401),
            "no signature": (WS, body, no_signature, 401),
            "gitlab wrong token": (WS, body, signed("gitlab", body, "guess"), 401),
            "replayed": (WS, body, signed("github", body, delivery="the-same-delivery"), 409),
            "huge body": (WS, b"x" * (1024 * 1024 + 1), signed("github", b"x" * (1024 * 1024 + 1)), 413),
            "not json": (WS, b"payload=%7B%7D", signed("github", b"payload=%7B%7D"), 400),
            "hosted workspace": ("hosted", body, signed("github", body), 401),
            "no such workspace": ("ghost", body, signed("github", body), 401),
            "not a name": ("Not.A_Name", body, signed("github", body), 401),
        }
        answers = {}
        for name, (ws, sent, headers, status) in cases.items():
            answer = mirror.deliver(sent, headers, ws)
            assert answer.status_code == status, f"{name}: {answer.status_code} {answer.text}"
            assert answer.headers["content-type"] == PROBLEM, name
            answers[name] = answer
        hidden = [answers[n].content for n in ("hosted workspace", "no such workspace", "bad signature")]
        assert len(set(hidden)) == 1, (
            "one answer whether the workspace exists, is hosted, or the signature is bad"
        )
        time.sleep(1.0)
        assert mirror.syncs("webhook") == before_syncs, "nothing fetched"
        assert mirror.head() == head and "pushed after" not in mirror.texts()
        refused = mirror.events("webhook-refused")
        assert {line["why"] for line in refused} >= {"bad-signature", "unsigned", "not-remote-backed"}
        assert mirror.events("webhook-replayed") and mirror.events("webhook-bad-body")
        text = mirror.log.read_text()
        assert SECRET not in text and "a wrong secret" not in text and hexmac(SECRET, body) not in text
        outcomes = {
            dict(k[1]).get("outcome"): v
            for k, v in mirror.samples().items()
            if k[0] == "selfhub_webhook_deliveries_total"
        }
        assert outcomes["refused"] >= 7 and outcomes["replayed"] == 1 and outcomes["too-large"] == 1
        assert outcomes["bad-body"] == 1


@pytest.mark.slow
def test_a_dead_backend_keeps_writes_and_pushes_them_once_back(tmp_path: Path, backend: Backend) -> None:
    seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        backend.stop()
        ids = mirror.post("written while the backend is down").json()["ids"]
        assert "written while the backend is down" in mirror.texts(), "acknowledged and served"
        failed = eventually(lambda: mirror.events("backend-sync-failed"), what="the failure logged")
        assert failed[0]["code"] == "unreachable" and failed[0]["level"] == "error"
        assert backend.url.split("//")[1].split("/")[0] in failed[0]["error"], "it names the backend"
        up = ("selfhub_backend_up", (("workspace", WS),))
        assert mirror.samples()[up] == 0.0 and mirror.syncs("write", "failed") >= 1
        mirror.post("and another one")
        backend.start()
        eventually(lambda: ids[0] in backend.log_text(), seconds=30, what="the writes pushed once it is back")
        eventually(lambda: "and another one" in backend.log_text(), what="both writes")
        eventually(lambda: mirror.samples()[up] == 1.0, what="the backend up again")


def test_a_backend_over_https_takes_its_token_from_the_environment(tmp_path: Path) -> None:
    from tests.support.sync_support import http_git

    base = tmp_path / "git"
    base.mkdir()
    git("init", "--bare", "-q", "--initial-branch=main", str(base / f"{WS}.git"))
    with http_git(base, "bot", "tok-123456") as port:
        url = f"http://127.0.0.1:{port}/{WS}.git"
        with_password = f"http://bot:tok-123456@127.0.0.1:{port}/{WS}.git"
        refused = run_self(
            ("admin", "workspace", "add", WS, "--remote", with_password, "--data", str(tmp_path / "data")),
            base_env(),
        )
        assert refused.returncode != 0 and "SELF_TOKEN" in refused.stderr, describe(refused)
        assert "tok-123456" not in refused.stderr + refused.stdout
        assert (
            not (tmp_path / "data" / "workspaces" / WS).exists()
            and not (tmp_path / "data" / "backends").exists()
        )
        creds = {"SELF_TOKEN": "tok-123456", "SELF_GIT_USERNAME": "bot"}
        made = run_self(
            (
                "admin",
                "workspace",
                "add",
                WS,
                "--remote",
                url,
                "--webhook-secret-env",
                HOOK_ENV,
                "--data",
                str(tmp_path / "data"),
            ),
            base_env() | creds,
        )  # an empty remote: a new store, published there
        assert made.returncode == 0, describe(made)
        assert f"webhook: POST https://SERVICE/hooks/{WS}" in made.stdout
        data = tmp_path / "data"
        assert "tok-123456" not in "".join(
            p.read_text(errors="replace")
            for p in data.rglob("*")
            if p.is_file() and p.suffix in (".json", "") and p.stat().st_size < 100_000
        )
        admin(data, "user", "add", "ann")
        writer = token(data, "ann", WS, "writer")
        service = Service(data, tmp_path / "serve.log", env=creds | {HOOK_ENV: SECRET})
        try:
            service.wait("/readyz")
            with service.client(writer) as client:
                made_project = client.post(
                    f"/api/v1/workspaces/{WS}/commands", json={"command": "project-add", "slug": SLUG}
                )
                assert made_project.status_code == 201, made_project.text

            def pushed() -> bool:
                proc = subprocess.run(
                    [str(GIT), "--git-dir", str(base / f"{WS}.git"), "ls-tree", "-r", "--name-only", "main"],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                return "workspace/log/000000.jsonl" in proc.stdout and SLUG in git(
                    "--git-dir", str(base / f"{WS}.git"), "show", "main:workspace/log/000000.jsonl"
                )

            eventually(pushed, what="the project pushed over HTTP with the token")
            assert "tok-123456" not in (tmp_path / "serve.log").read_text()
        finally:
            service.stop()


def test_a_remote_declared_in_the_configuration_is_cloned_at_start_and_kept_in_step(
    tmp_path: Path, backend: Backend
) -> None:
    """`[remotes.acme]` in `self serve --config`: no `self admin workspace add`; the service
    clones the backend as it starts, pushes a write, and takes a signed delivery."""
    cli = seeded(tmp_path, backend)
    data = tmp_path / "data"
    config = tmp_path / "serve.toml"
    config.write_text(
        f'[remotes.{WS}]\nurl = "{backend.url}"\nwebhook_secret_env = "{HOOK_ENV}"\npoll_s = 0\n'
    )
    data.mkdir()  # an empty folder for DATA (a new volume): the service makes the workspace
    admin(data, "user", "add", "ann")
    service = Service(data, tmp_path / "serve.log", config=config, env={HOOK_ENV: SECRET})
    try:
        service.wait("/readyz")
        writer = token(data, "ann", WS, "writer")  # the workspace exists once cloned
        assert json.loads((data / "backends" / f"{WS}.json").read_text()) == {
            "url": backend.url, "secret_env": HOOK_ENV, "poll_s": 0.0,
        }  # fmt: skip
        assert git("-C", str(data / "workspaces" / WS), "rev-parse", "main").strip() == cli.head()
        body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": "configured"}}]}
        with service.client(writer) as client:
            assert client.post(f"/api/v1/workspaces/{WS}/events", json=body).status_code == 201
        eventually(lambda: "configured" in backend.log_text(), what="the write on the backend")
        cli.run("goal", "pushed to a configured mirror")
        cli.run("sync")
        delivery = push_body(cli.head())
        with httpx.Client(base_url=service.url, timeout=30) as client:
            answer = client.post(f"/hooks/{WS}", content=delivery, headers=signed("github", delivery))
        assert answer.status_code == 202, answer.text

        def texts() -> set[str]:
            with service.client(writer) as client:
                rows = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"})
            return {row["text"] for row in rows.json()}

        eventually(lambda: "pushed to a configured mirror" in texts(), seconds=10, what="the delivery's push")
    finally:
        service.stop()


def test_a_configured_remote_with_a_credential_is_refused_before_anything_binds(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(f'[remotes.{WS}]\nurl = "https://bot:tok-0123456789@git.example/{WS}.git"\n')
    data, port = tmp_path / "data", free_port()
    data.mkdir()
    args = ("serve", "--data", str(data), "--port", str(port), "--config", str(config))
    proc = run_self(args, base_env())
    assert proc.returncode == 2, describe(proc)
    assert proc.stderr.startswith(f"self: {config}: remotes.{WS}.url: ") and "SELF_TOKEN" in proc.stderr
    assert "tok-0123456789" not in proc.stderr + proc.stdout
    assert not data.exists() or not any(data.rglob("*.json")), "nothing written"
