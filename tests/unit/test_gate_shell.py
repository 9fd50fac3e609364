"""The action gate's reading of shell commands: what deletes, truncates, discards or writes a
shared branch asks a person; the harmless neighbours pass. Facts only the checkout knows
(whether a file exists, the branch a bare push writes) come in as `gate.Checkout`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core.gates import action as gate
from service.core.gates.shellcmd import Simple, commands

FEATURE = gate.Checkout(branch="feature", upstream="feature")
ON_MAIN = gate.Checkout(branch="main", upstream="main")
TRACKS_MAIN = gate.Checkout(branch="topic", upstream="main")
EXISTING = gate.Checkout(files={"f": True, "notes.md": True, "sub/f": True, "out.txt": False})


def ruling(command: str, checkout: gate.Checkout | None = None) -> str:
    return gate.rule("Bash", {"command": command}, None, checkout).decision


@pytest.mark.parametrize(
    ("command", "checkout", "decision"),
    [
        # deleting files: every rm asks; -i too (the agent, not a person, answers its prompt)
        ("rm --recursive --force build", None, "ask"),
        ("rm --recursive build", None, "ask"),
        ("rm --force build", None, "ask"),
        ("rm -fr build", None, "ask"),
        ("rm -Rf build", None, "ask"),
        ("rm data.db", None, "ask"),
        ("rm -i data.db", None, "ask"),
        ("rm -- -weird", None, "ask"),
        ("/bin/rm x", None, "ask"),
        ("\\rm x", None, "ask"),
        ("sudo rm -rf /var/x", None, "ask"),
        ("sudo -u root rm x", None, "ask"),
        ("env FOO=1 rm x", None, "ask"),
        ("env -i PATH=/bin rm x", None, "ask"),
        ("command rm x", None, "ask"),
        ("FOO=1 BAR=2 rm x", None, "ask"),
        ("nohup rm x &", None, "ask"),
        ("timeout 5 rm x", None, "ask"),
        ("ls | xargs rm", None, "ask"),
        ("ls | xargs -n 1 rm -f", None, "ask"),
        ("make && rm -rf dist", None, "ask"),
        ("make; rm x", None, "ask"),
        ("make || rm x", None, "ask"),
        ("(cd build && rm x)", None, "ask"),
        ("echo $(rm x)", None, "ask"),
        ('echo "$(rm -rf x)"', None, "ask"),
        ("echo `rm x`", None, "ask"),
        ("bash -c 'rm -rf x'", None, "ask"),
        ('sh -lc "cd a && rm b"', None, "ask"),
        ("eval rm x", None, "ask"),
        ("if true; then rm x; fi", None, "ask"),
        ("unlink f", None, "ask"),
        ("shred -u secrets", None, "ask"),
        ("find . -delete", None, "ask"),
        ("find . -name '*.pyc' -delete", None, "ask"),
        ("find . -name x -exec rm {} \\;", None, "ask"),
        ("find . -type f -exec rm -f {} +", None, "ask"),
        ("truncate -s 0 f", None, "ask"),
        ("truncate --size=0 log", None, "ask"),
        ("dd if=/dev/zero of=disk.img", None, "ask"),
        ("mkfs.ext4 /dev/sdb1", None, "ask"),
        ("psql -c 'DROP TABLE users'", None, "ask"),
        ("sqlite3 a.db 'delete from t'", None, "ask"),
        # overwriting a file that exists (the shell says which exist)
        ("echo > f", EXISTING, "ask"),
        ("echo hi > notes.md", EXISTING, "ask"),
        ("echo hi>f", EXISTING, "ask"),
        ("echo hi 1> f", EXISTING, "ask"),
        ("echo hi 1>f", EXISTING, "ask"),
        ("ls &> f", EXISTING, "ask"),
        ("ls >| f", EXISTING, "ask"),
        ("ls 2> f", EXISTING, "ask"),
        ("> f", EXISTING, "ask"),
        (": > f", EXISTING, "ask"),
        ("cd sub && echo > f", EXISTING, "ask"),
        ("echo x | tee f", EXISTING, "ask"),
        ("echo > f", None, "ask"),  # not known to be new: asks
        ("cd $HOME && echo > g", EXISTING, "ask"),  # a cd the gate cannot follow
        ('echo x > "$OUT"', EXISTING, "ask"),  # a file the gate cannot name
        ("echo x > *.md", EXISTING, "ask"),
        ("cat > f <<'EOF'\nit's data, not a command: rm -rf /\nEOF", EXISTING, "ask"),
        # git: discarding work, deleting branches, force and shared pushes
        ("git clean -fdx", None, "ask"),
        ("git clean --force -d", None, "ask"),
        ("git clean -d -f", None, "ask"),
        ("git reset --hard HEAD~1", None, "ask"),
        ("git checkout -- .", None, "ask"),
        ("git restore .", None, "ask"),
        ("git branch -D topic", None, "ask"),
        ("git branch --delete --force topic", None, "ask"),
        ("git stash drop", None, "ask"),
        ("git push --force origin feature", FEATURE, "ask"),
        ("git push -f", FEATURE, "ask"),
        ("git push -uf origin feature", FEATURE, "ask"),
        ("git push --force-with-lease origin feature", FEATURE, "ask"),
        ("git push origin +feature", FEATURE, "ask"),
        ("git push origin --delete b", FEATURE, "ask"),
        ("git push -d origin b", FEATURE, "ask"),
        ("git push origin :b", FEATURE, "ask"),
        ("git push --mirror backup", FEATURE, "ask"),
        ("git push --all origin", FEATURE, "ask"),
        ("git push origin main", FEATURE, "ask"),
        ("git push origin HEAD:master", FEATURE, "ask"),
        ("git push origin feature:refs/heads/main", FEATURE, "ask"),
        ("git push origin HEAD", ON_MAIN, "ask"),
        ("git -C repo push origin main", FEATURE, "ask"),
        ("git push", ON_MAIN, "ask"),
        ("git push", TRACKS_MAIN, "ask"),
        ("git push origin", ON_MAIN, "ask"),
        ("git push", None, "ask"),  # the branch is unknown
        ("git push -o ci.skip", ON_MAIN, "ask"),
        ("git push 'unclosed", None, "ask"),  # unreadable: a person decides
        ('env -S "ls \'x" true', None, "ask"),
        ("env -S 'rm -f x' true", None, "ask"),
        # the harmless neighbours
        ("rmdir empty", None, "allow"),
        ("find . -name x", None, "allow"),
        ("find . -name '*.py' -print", None, "allow"),
        ("echo hi", None, "allow"),
        ("echo '# rm -rf /'", None, "allow"),
        ("grep -r 'rm -rf' .", None, "allow"),
        ("echo > out.txt", EXISTING, "allow"),
        ("echo hi >> f", EXISTING, "allow"),
        ("ls &>> f", EXISTING, "allow"),
        ("make > /dev/null 2>&1", None, "allow"),
        ("ls >&2", None, "allow"),
        ("ls 2>&-", None, "allow"),
        ("echo x | tee -a f", EXISTING, "allow"),
        ("echo x | tee /dev/stderr", None, "allow"),
        ("cat < f", EXISTING, "allow"),
        ("command -v rm", None, "allow"),
        ("truncate_logs_report --help", None, "allow"),
        ("git push origin feature", FEATURE, "allow"),
        ("git push origin feature/x", None, "allow"),
        ("git push -u origin feature", None, "allow"),
        ("git push origin HEAD", FEATURE, "allow"),
        ("git push", FEATURE, "allow"),
        ("git push origin", FEATURE, "allow"),
        ("git push --tags", None, "allow"),
        ("git push -o ci.skip origin feature", None, "allow"),
        ("git restore --staged .", None, "allow"),
        ("git branch -d topic", None, "allow"),
        ("git stash list", None, "allow"),
        ("git clean -n", None, "allow"),
        ("git commit -m \"$(cat <<'EOF'\nDon't rm anything\nEOF\n)\"", None, "allow"),
        ("pytest -q", None, "allow"),
    ],
)
def test_shell_commands_are_ruled_by_what_they_destroy(
    command: str, checkout: gate.Checkout | None, decision: str
) -> None:
    assert ruling(command, checkout) == decision


@pytest.mark.parametrize(
    ("command", "files", "branch"),
    [
        ("echo > f", ("f",), False),
        ("cd sub && echo hi 1> f; ls >> g 2>&1", ("sub/f",), False),
        ("(cd sub && echo > a) && echo > b", ("sub/a", "b"), False),
        ("ls | tee out.txt log", ("out.txt", "log"), False),
        ("echo > ~/x > /tmp/y", ("~/x", "/tmp/y"), False),
        ("make > /dev/null", (), False),
        ('echo > "$OUT" > *.log', (), False),  # unknowable: not asked, so they count as existing
        ("git push", (), True),
        ("sudo git -c a=b push origin", (), True),
        ("git status", (), False),
        ("echo 'unclosed", (), False),
    ],
)
def test_the_gate_says_which_checkout_facts_it_needs(
    command: str, files: tuple[str, ...], branch: bool
) -> None:
    assert gate.questions("Bash", {"command": command}) == gate.Questions(files, branch)


def test_only_shell_calls_raise_questions() -> None:
    assert gate.questions("Write", {"file_path": "f", "content": "x"}) == gate.Questions()


def test_simple_commands_keep_their_words_and_redirections() -> None:
    assert commands("sudo env A=1 rm -rf x 2>err && cd d; echo hi > o | cat") == [
        Simple(("rm", "-rf", "x"), ("err",), "."),
        Simple(("echo", "hi"), ("o",), "d"),
        Simple(("cat",), (), "d"),
    ]


@given(st.text(max_size=60))
def test_any_text_gets_a_ruling(command: str) -> None:
    assert ruling(command) in ("allow", "ask")
