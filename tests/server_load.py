"""Concurrent HTTP load on a real ``agentgym-budget serve`` process, and what it leaves alive.

``python -m tests.server_load [REQUESTS] [MAX_SESSIONS]`` starts ``serve TextWorld-CoinCollector-v0
--max-sessions MAX_SESSIONS`` in a child process, sends REQUESTS concurrent ``POST /reset``, then a
``POST /step`` with no session and an oversized body, and counts the z-machine interpreters alive in
the server during the load (sampled every 20 ms) and afterwards (jericho maps one private copy of
``libfrotz.so`` per interpreter). It prints one JSON line: ``{"statuses", "refusals_are_json",
"interpreters", "peak_interpreters", "step_without_session", "oversized", "seconds"}``.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["interpreters", "load", "main", "post", "rss_mib", "start_server"]


def start_server(max_sessions: int, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """A ``serve`` child process on a free loopback port, and its URL (once it listens)."""
    command = [sys.executable, "-m", "agentgym_budget", "serve", "TextWorld-CoinCollector-v0", "--port", "0"]
    command += ["--max-sessions", str(max_sessions), *extra]
    environment = {**os.environ, "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on " not in line:
        process.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return process, line.rsplit("listening on ", 1)[1].strip()


def post(url: str, body: bytes) -> tuple[int, str, Any]:
    """``POST`` ``body`` as JSON: the status, the content type and the decoded JSON (``None`` if not JSON)."""
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, kind, raw = response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as err:
        status, kind, raw = err.code, err.headers.get("content-type", ""), err.read()
    try:
        return status, kind, json.loads(raw)
    except ValueError:
        return status, kind, None


def rss_mib(pid: int) -> float:
    """The resident memory of process ``pid``, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def interpreters(pid: int) -> int:
    """How many private ``libfrotz.so`` copies (one per interpreter) process ``pid`` maps."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return len({line.split()[-1] for line in maps.splitlines() if "libfrotz" in line})


def load(requests: int = 32, max_sessions: int = 2) -> dict[str, Any]:
    """Run the load described in the module docstring and return its figures."""
    process, url = start_server(max_sessions)
    try:
        started, peak, done = time.monotonic(), [0], threading.Event()

        def sample() -> None:  # the most interpreters alive at once while the requests run
            while not done.wait(0.02):
                peak[0] = max(peak[0], interpreters(process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with ThreadPoolExecutor(requests) as pool:
            answers = list(pool.map(lambda i: post(url + "/reset", json.dumps({"seed": i}).encode()), range(requests)))
        seconds = time.monotonic() - started
        done.set()
        sampler.join()
        statuses = collections.Counter(status for status, _, _ in answers)
        refused_json = all(isinstance(body, dict) for status, _, body in answers if status != 200)
        time.sleep(1.0)
        alive = interpreters(process.pid)
        step = post(url + "/step", json.dumps({"action": {"command": "look"}}).encode())
        oversized = post(url + "/reset", b'{"seed": 0, "x": "' + b"a" * (2 << 20) + b'"}')
        return {
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "refusals_are_json": refused_json,
            "interpreters": alive,
            "peak_interpreters": peak[0],
            "step_without_session": {"status": step[0], "content_type": step[1], "body": step[2]},
            "oversized": {"status": oversized[0], "body": oversized[2]},
            "seconds": round(seconds, 2),
        }
    finally:
        process.kill()
        process.wait()


def main() -> None:
    """``python -m tests.server_load [REQUESTS] [MAX_SESSIONS]``."""
    numbers = [int(a) for a in sys.argv[1:3]]
    print(json.dumps(load(*numbers)))


if __name__ == "__main__":
    main()
