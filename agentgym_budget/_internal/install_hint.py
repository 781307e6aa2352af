"""The exact ``pip install`` command that adds an extra, for the way this package was installed.

An editable install from a checkout records the checkout in its distribution's PEP 610
``direct_url.json`` (``{"url": "file:///path", "dir_info": {"editable": true}}``); the fix there is
``pip install -e "/path[extra]"``. Any other install (a wheel, an index) gets
``pip install "agentgym-budget[extra]"``.

Example:
    >>> command_for({"url": "file:///home/me/agentgym-budget", "dir_info": {"editable": True}}, "trl")
    'pip install -e "/home/me/agentgym-budget[trl]"'
    >>> command_for(None, "trl")
    'pip install "agentgym-budget[trl]"'
    >>> install_command("webshop").endswith('[webshop]"')
    True
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["command_for", "install_command"]

DISTRIBUTION = "agentgym-budget"


def direct_url() -> dict[str, Any] | None:
    """This distribution's PEP 610 ``direct_url.json``, or ``None`` (not installed, not direct, unreadable).

    The first installed copy that has one is read: a checkout's own ``*.egg-info`` folder (left by a
    build, found first when the checkout is on ``sys.path``) has none.
    """
    for distribution in metadata.distributions(name=DISTRIBUTION):
        text = distribution.read_text("direct_url.json")
        if not text:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None
    return None


def command_for(direct: dict[str, Any] | None, extra: str) -> str:
    """The install command for ``extra`` given a ``direct_url.json`` mapping (or ``None``)."""
    if direct is not None:
        dir_info = direct.get("dir_info")
        url = direct.get("url")
        if isinstance(dir_info, dict) and isinstance(url, str):
            parsed = urlparse(url)
            if parsed.scheme == "file" and parsed.path:
                flag = "-e " if dir_info.get("editable") else ""
                return f'pip install {flag}"{unquote(parsed.path)}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def install_command(extra: str) -> str:
    """The command that installs ``extra`` for how this package is installed here."""
    return command_for(direct_url(), extra)
