"""Making a file's contents and a rename durable before the next step relies on them."""

from __future__ import annotations

import os
from pathlib import Path


def sync_file(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def sync_directory(directory: Path) -> None:
    """Make a rename in `directory` durable, where the platform allows it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems and Windows refuse fsync on a directory
    finally:
        os.close(descriptor)
