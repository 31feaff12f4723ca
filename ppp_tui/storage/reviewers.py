"""Who marks: the reviewer a mark is recorded for, and whose marks a figure counts.

Every mark belongs to a reviewer. The reviewer is `--reviewer NAME`, else
$PPP_TUI_REVIEWER, else `reviewer` in config.toml's [ppp], else git's `user.name`, else
the login name. Marks from before reviewers were recorded belong to the unknown
reviewer: stored as the empty name, shown as "(unknown)".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from .database import StoreError

REVIEWER_ENV = "PPP_TUI_REVIEWER"
# The reviewer of marks made before reviewers were recorded: stored as "", shown so.
UNKNOWN = ""
UNKNOWN_LABEL = "(unknown)"
MAX_LENGTH = 100


def shown(reviewer: str) -> str:
    """A reviewer as people read it: the unknown reviewer is "(unknown)"."""
    return reviewer if reviewer else UNKNOWN_LABEL


def checked(name: str, where: str = "reviewer") -> str:
    """`name` as a stored reviewer name, or a StoreError saying what is wrong with it.

    Surrounding spaces go; "(unknown)" names the unknown reviewer. A name is at most
    MAX_LENGTH characters of printable text (no control characters or line breaks).
    """
    name = name.strip()
    if name == UNKNOWN_LABEL:
        return UNKNOWN
    if not name:
        raise StoreError(f"{where}: a reviewer name cannot be empty")
    if len(name) > MAX_LENGTH:
        raise StoreError(f"{where}: a reviewer name is at most {MAX_LENGTH} characters")
    if any(not ch.isprintable() for ch in name):
        raise StoreError(f"{where}: a reviewer name cannot hold control characters")
    return name


@dataclass(frozen=True)
class Scope:
    """Whose marks count: one reviewer's (the current one by default), or every
    reviewer's, each mark one observation (`all_reviewers`)."""

    reviewer: str
    all_reviewers: bool = False

    def label(self) -> str:
        return "every reviewer" if self.all_reviewers else shown(self.reviewer)


def resolve(explicit: str | None = None, configured: str | None = None) -> tuple[str, str]:
    """(the current reviewer, where the name came from): `explicit` (--reviewer), else
    $PPP_TUI_REVIEWER, else `configured` (config.toml), else git's user.name, else the
    login name. A name given wrongly is a StoreError."""
    if explicit is not None:
        return checked(explicit, "--reviewer"), "--reviewer"
    from_env = os.environ.get(REVIEWER_ENV)
    if from_env is not None and from_env.strip():
        return checked(from_env, f"${REVIEWER_ENV}"), f"${REVIEWER_ENV}"
    if configured is not None:
        # Read from config.toml, checked there ("(unknown)" already the unknown reviewer).
        return configured, "config.toml"
    git = _git_user()
    if git:
        return git, "git user.name"
    return _login(), "login name"


# The process's current reviewer once the command line has worked it out (`use`).
_current: list[str] = []


def use(reviewer: str) -> None:
    """Make `reviewer` this process's current reviewer (stores opened later default to it)."""
    _current[:] = [reviewer]


def current() -> str:
    """This process's current reviewer: the one `use` set, else `resolve()`'s."""
    if not _current:
        _current.append(resolve()[0])
    return _current[0]


@lru_cache(maxsize=1)
def _git_user() -> str | None:
    """git's user.name, if git is installed and it is set (asked once per process)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "config", "--get", "user.name"],
            capture_output=True,
            text=True,
            timeout=3,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    try:
        return checked(done.stdout)
    except StoreError:
        return None


def _login() -> str:
    import getpass

    try:
        return checked(getpass.getuser())
    except (StoreError, OSError, KeyError, ImportError):
        return UNKNOWN
