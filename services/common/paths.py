"""Where Slipstream keeps local state: `$SLIPSTREAM_HOME` (default `~/.slipstream`)."""

from __future__ import annotations

import os
from pathlib import Path


def slipstream_home() -> Path:
    """`$SLIPSTREAM_HOME` (an empty value counts as unset), else `~/.slipstream`."""
    return Path(os.environ.get("SLIPSTREAM_HOME") or Path.home() / ".slipstream").expanduser()


def logs_dir() -> Path:
    return slipstream_home() / "logs"


def run_dir() -> Path:
    """Pid files of services started by `slipstream up`."""
    return slipstream_home() / "run"
