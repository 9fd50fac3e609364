"""End-to-end fixtures: temporary stores and the `self` command run against them.

One template store is made per session by the real commands (`self init DIR`, `self project
add app`) and every test gets its own copy of it in `tmp_path`. `store.run(*args,
env_extra=None, input=None)` runs `self` with SELF_WORKSPACE set to the store and
SELF_PROJECT when a project is selected, and returns a CompletedProcess: through the CLI's
entry point in this process, or as the real executable for a test marked `process`
(tests/support/selfrun.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.selfrun import PROJECT, Store, base_env, describe, run_self


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store made once per session by `self init` and `self project add`."""
    root = tmp_path_factory.mktemp("template") / "store"
    env = base_env()
    made = run_self(("init", str(root)), env)
    assert made.returncode == 0, describe(made)
    assert (root / "workspace.json").is_file() and (root / ".git").is_dir(), made.stdout
    env["SELF_WORKSPACE"] = str(root)
    added = run_self(("project", "add", PROJECT, "--desc", "a sample app"), env)
    assert added.returncode == 0, describe(added)
    return root


def copy_of(template: Path, folder: Path, project: str | None = PROJECT) -> Store:
    root = folder / "store"
    shutil.copytree(template, root, symlinks=True)
    return Store(root, project)


@pytest.fixture
def bare(tmp_path: Path, template: Path) -> Store:
    """A fresh store with project `app` registered, but no project selected."""
    return copy_of(template, tmp_path, None)


@pytest.fixture
def store(tmp_path: Path, template: Path) -> Store:
    """A fresh store with project `app` registered and selected (SELF_PROJECT=app)."""
    return copy_of(template, tmp_path)


@pytest.fixture
def fresh(tmp_path: Path) -> Store:
    """A store just made by `self init DIR` in tmp_path: no project registered or selected."""
    root = tmp_path / "store"
    made = run_self(("init", str(root)), base_env(), cwd=tmp_path)
    assert made.returncode == 0, describe(made)
    assert (root / "workspace.json").is_file(), made.stdout
    return Store(root, None)


@pytest.fixture(scope="module")
def module_store(tmp_path_factory: pytest.TempPathFactory, template: Path) -> Store:
    """One store shared by the tests of a module (for read-only checks on one setup)."""
    return copy_of(template, tmp_path_factory.mktemp("module"))
