"""A small client for OpenAI-compatible ``/chat/completions`` endpoints (vLLM, SGLang, llama.cpp, Ollama...).

:class:`ChatClient` sends requests with :mod:`aiohttp` and adds what an evaluation needs:

* an API key read from an environment variable at request time (``api_key_env``); the key is never
  stored on the client, shown in its ``repr``, logged or written anywhere; no variable, no header
  (local servers usually need none). Servers may echo request headers in their error bodies, so
  every message the client produces is passed through :func:`redact`: the key and anything after
  ``Bearer`` become ``***``;
* a total deadline per request (``timeout`` seconds from sending to the last byte of the answer,
  however slowly the server sends it; waiting for a free concurrency slot does not count), and
  retries with exponential backoff (``backoff * 2**attempt`` seconds, capped at 30 s, or the
  server's ``Retry-After``) on timeouts, connection errors and the statuses 408, 409, 429, 500,
  502, 503, 504; other errors fail at once with :class:`~agentgym_budget.errors.AgentError`;
* a concurrency limit: at most ``concurrency`` requests in flight from this client, over as many
  keep-alive connections (aiohttp's connector, with its C HTTP parser: about 0.3 ms of CPU per request
  where httpx spent 1.2 to 2 ms, which a busy worker spends on its envs instead);
* proxies from ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` (read when the client opens its
  connections, not per request: looking them up per request cost 0.5 ms) and certificates from the system store
  (``SSL_CERT_FILE`` / ``SSL_CERT_DIR``); ``user:password@`` in the URL is sent as Basic authentication
  when no API key is set (with a key, the key is sent and the URL's credentials are not);
* token counts from the response's ``usage`` (absent or ``null``: not reported, 0); a ``usage``
  field that is not a non-negative integer (``"many"``, a list, ``1e400``, ``-3``, ``null``) is a
  malformed answer: :class:`~agentgym_budget.errors.AgentError`.

Clients are bound to the event loop they first run in. :func:`shared_client` returns one client per
configuration and loop, so every agent of a worker process shares one connection pool and one
concurrency limit; :func:`close_shared_clients` closes the current loop's clients.

Example:
    >>> client = ChatClient("http://127.0.0.1:8000/v1", api_key_env="MY_KEY", retries=2)
    >>> client
    ChatClient(base_url='http://127.0.0.1:8000/v1', api_key_env='MY_KEY', timeout=60.0, retries=2, concurrency=8)
    >>> client.url
    'http://127.0.0.1:8000/v1/chat/completions'
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import random
import re
import ssl
import urllib.request
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from yarl import URL

from agentgym_budget.errors import AgentError, InvalidOptionError

__all__: list[str] = []

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
"""HTTP statuses that are retried (with backoff); any other error status fails at once."""

_MAX_DELAY = 30.0
_BEARER = re.compile(r"(bearer)(\s*[:=]?\s*)[^\s\"',;}\]]+", re.IGNORECASE)
_REDACTED = "***"


def redact(text: str, secret: str | None = None) -> str:
    """``text`` with ``secret`` and every ``Bearer <token>`` replaced by ``***``.

    Example:
        >>> redact('{"error": "bad key", "headers": {"authorization": "Bearer sk-123"}}', "sk-123")
        '{"error": "bad key", "headers": {"authorization": "Bearer ***"}}'
        >>> redact("key=sk-123 was refused", "sk-123")
        'key=*** was refused'
    """
    if secret:
        text = text.replace(secret, _REDACTED)
    return _BEARER.sub(lambda match: match.group(1) + match.group(2) + _REDACTED, text)


def without_userinfo(url: str) -> str:
    """``url`` without a ``user:password@`` part (shown in messages and reprs instead of the URL).

    Example:
        >>> without_userinfo("https://me:sk-123@api.example.com/v1")
        'https://api.example.com/v1'
    """
    parsed = URL(url)
    return str(parsed.with_user(None)) if parsed.raw_user or parsed.raw_password else url


def _token_count(usage: Mapping[str, Any], name: str) -> int:
    value = usage.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"usage.{name} is {value!r:.40}")
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise ValueError(f"usage.{name} is {value!r:.40}")
    return int(value)


@dataclass(frozen=True)
class ChatResult:
    """One completion.

    Attributes:
        text: The assistant message's content.
        prompt_tokens: Prompt tokens reported by the server (0 if it reports none).
        completion_tokens: Completion tokens reported by the server (0 if it reports none).
        retries: How many failed attempts preceded this one.
        finish_reason: The server's ``finish_reason`` (``None`` if absent).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    retries: int
    finish_reason: str | None = None


def environment_proxy(url: str) -> str | None:
    """The proxy the environment (``<scheme>_proxy``, ``no_proxy``) sets for ``url``, or ``None``.

    Example:
        >>> import os
        >>> os.environ.update(HTTPS_PROXY="http://proxy.lan:3128", NO_PROXY="localhost")
        >>> environment_proxy("https://api.example.com/v1"), environment_proxy("https://localhost:8000/v1")
        ('http://proxy.lan:3128', None)
        >>> del os.environ["HTTPS_PROXY"], os.environ["NO_PROXY"]
    """
    parsed = URL(url)
    proxy = urllib.request.getproxies().get(parsed.scheme)
    if not proxy or urllib.request.proxy_bypass(parsed.host or ""):
        return None
    return proxy


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The default verification context (system certificates), built once per process (~70 ms a build)."""
    return ssl.create_default_context()


@dataclass(frozen=True)
class _Response:
    status_code: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class ChatClient:
    """Async client of one OpenAI-compatible server (see the module docstring).

    Args:
        base_url: The API root, e.g. ``http://localhost:8000/v1`` (``/chat/completions`` is appended).
        api_key_env: Name of the environment variable holding the API key.
        timeout: Seconds allowed for one request, in total (connecting, sending and reading the whole answer).
        retries: Extra attempts after a retryable failure.
        backoff: First retry delay in seconds (doubled every attempt).
        concurrency: Maximum requests in flight (and keep-alive connections).

    Raises:
        InvalidOptionError: A non-positive timeout or concurrency, or negative retries/backoff.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 1.0,
        concurrency: int = 8,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InvalidOptionError(f"base_url must start with http:// or https://, got {base_url!r}.")
        if timeout <= 0 or concurrency < 1 or retries < 0 or backoff < 0:
            raise InvalidOptionError(
                f"ChatClient needs timeout > 0, concurrency >= 1, retries >= 0 and backoff >= 0; got "
                f"timeout={timeout}, concurrency={concurrency}, retries={retries}, backoff={backoff}."
            )
        self.base_url = base_url.rstrip("/")
        self._shown_url = without_userinfo(self.url)
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.concurrency = int(concurrency)
        self._request_url = URL(self.url)
        self._keyed_url = self._request_url.with_user(None)
        self._session: aiohttp.ClientSession | None = None
        self._proxy: str | None = None
        self._slots: asyncio.Semaphore | None = None
        self._jitter = random.Random()

    @property
    def url(self) -> str:
        """The completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return (
            f"ChatClient(base_url={without_userinfo(self.base_url)!r}, api_key_env={self.api_key_env!r}, timeout={self.timeout}, "
            f"retries={self.retries}, concurrency={self.concurrency})"
        )

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _ensure_open(self) -> asyncio.Semaphore:
        if self._session is None or self._session.closed or self._slots is None:
            connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=0, ssl=_ssl_context())
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None),
            )
            self._proxy = environment_proxy(self.url)
            self._slots = asyncio.Semaphore(self.concurrency)
        return self._slots

    async def _post(self, payload: Mapping[str, Any], headers: Mapping[str, str]) -> _Response:
        assert self._session is not None
        url = self._keyed_url if "Authorization" in headers else self._request_url
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        request_headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        async with self._session.post(url, data=data, headers=request_headers, proxy=self._proxy) as response:
            return _Response(response.status, response.headers, await response.read())

    def _delay(self, attempt: int, response: _Response | None) -> float:
        if response is not None:
            try:
                return min(_MAX_DELAY, max(0.0, float(response.headers.get("retry-after", ""))))
            except ValueError:
                pass
        return min(_MAX_DELAY, self.backoff * 2**attempt * self._jitter.uniform(0.75, 1.0))

    async def complete(self, payload: Mapping[str, Any]) -> ChatResult:
        """POST ``payload`` to :attr:`url` and return the first choice (retrying as documented).

        Raises:
            AgentError: A non-retryable error, retries exhausted, or a malformed response; its
                message never holds the API key (:func:`redact`).
        """
        slots = self._ensure_open()
        last_problem = ""
        for attempt in range(self.retries + 1):
            response: _Response | None = None
            headers = self._headers()
            secret = os.environ.get(self.api_key_env, "")
            try:
                async with slots:
                    response = await asyncio.wait_for(self._post(payload, headers), timeout=self.timeout)
            except asyncio.TimeoutError:
                last_problem = f"no complete answer within {self.timeout:g} s"
            except (aiohttp.ClientError, OSError) as err:
                last_problem = redact(f"{type(err).__name__}: {err}", secret)
            else:
                if response.status_code < 400:
                    return self._parse(response, attempt, secret)
                detail = redact(response.text, secret)[:300].strip()
                last_problem = f"HTTP {response.status_code}: {detail}"
                if response.status_code not in RETRY_STATUSES:
                    raise AgentError(f"{self._shown_url} refused the request ({last_problem}); not retried.")
            if attempt < self.retries:
                await asyncio.sleep(self._delay(attempt, response))
        raise AgentError(f"{self._shown_url} failed after {self.retries + 1} attempts; last problem: {last_problem}.")

    def _parse(self, response: _Response, attempt: int, secret: str = "") -> ChatResult:
        def malformed(problem: str) -> AgentError:
            shown = redact(response.text, secret)[:300]
            return AgentError(f"{self._shown_url} answered with {problem}: {shown!r}.")

        try:
            body = json.loads(response.body)
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise malformed("something that is not a chat completion") from None
        usage = body.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise malformed(f"a malformed usage ({type(usage).__name__}, expected an object)")
        try:
            prompt_tokens = _token_count(usage or {}, "prompt_tokens")
            completion_tokens = _token_count(usage or {}, "completion_tokens")
        except ValueError as err:
            raise malformed(f"a malformed usage ({err}; expected a non-negative integer)") from None
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        return ChatResult(
            text=str(text),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            retries=attempt,
            finish_reason=reason if isinstance(reason, str) else None,
        )

    async def aclose(self) -> None:
        """Close the connections (the client reopens them if used again)."""
        session, self._session, self._slots = self._session, None, None
        if session is not None:
            await session.close()


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], ChatClient]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(base_url: str, **options: Any) -> ChatClient:
    """The running event loop's client for this configuration (created on first use).

    Outside a running loop it returns a new client that is not shared.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return ChatClient(base_url, **options)
    clients = _SHARED.setdefault(loop, {})
    key = (base_url, *sorted(options.items()))
    client = clients.get(key)
    if client is None:
        client = clients[key] = ChatClient(base_url, **options)
    return client


async def close_shared_clients() -> None:
    """Close and forget every client :func:`shared_client` made for the running loop."""
    clients = _SHARED.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.aclose()
