"""The HTTP client of the inference-server engine: keep-alive connections over the standard
library's `http.client`, one per thread.

Why not httpx (which the rest of the project uses): the engine sends many small requests
from many threads. httpx's connection pool serialises them on one lock, and each request
costs about three times the CPU of `http.client`; against a server that answers at once,
the engine issued about 500 requests/s through httpx and about 2,000 through this client on
the same two cores (`bench/server_client.py`, docs/benchmarks.md). A large model's server
answers thousands of short continuations a second, so the client must not be the limit.

What it does:
- one connection per thread, kept alive between requests, reopened after a failure;
- a request on a kept-alive connection that the server had already closed is sent again
  once at once on a new connection (what HTTP clients do for a stale connection); any
  other failure is the caller's to retry;
- `timeout` bounds connecting and each wait for the server (as httpx's does);
- HTTP and HTTPS; a user and password in the URL are sent as Basic auth (an API key
  header replaces them); `http_proxy` / `https_proxy` / `no_proxy` from the environment are
  honoured (proxies without credentials).
"""

import base64
import http.client
import json
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

# Failures that mean a kept-alive connection had been closed by the server.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class TransportError(Exception):
    """A request that got no HTTP answer; `kind` is "timeout", "connect" or "request"."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass
class Reply:
    """An HTTP answer: status, headers (names lower-cased) and the body."""

    status_code: int
    content: bytes
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self):
        """The body as JSON; ValueError when it is not JSON."""
        return json.loads(self.content)


class KeepAliveClient:
    """Requests to one server (`base_url`'s scheme, host and port), safe to share between
    threads: each thread uses its own connection."""

    def __init__(self, base_url: str, *, headers: dict[str, str], timeout: float) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Not an http(s) URL: {base_url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.base_path = parts.path.rstrip("/")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if parts.username or parts.password:  # as browsers and httpx do: Basic auth
            user = urllib.parse.unquote(parts.username or "")
            secret = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{secret}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"
        self.headers.update(headers)
        self.timeout = timeout
        self.proxy = _proxy_for(parts.scheme, self.host)
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def request(self, method: str, path: str, body: dict | None = None) -> Reply:
        """Send `method path` (relative to the base URL) with `body` as JSON.

        Raises TransportError when no answer came: "connect" (nothing accepts the
        connection), "timeout" (no answer within the timeout) or "request" (the connection
        failed on the way).
        """
        payload = None if body is None else json.dumps(body).encode()
        target = self._target(path)
        for attempt in range(2):
            connection = getattr(self._local, "connection", None)
            fresh = connection is None
            if fresh:
                connection = self._open()
            try:
                return self._exchange(connection, method, target, payload)
            except _STALE as error:
                self._drop(connection)
                if fresh or attempt:
                    raise TransportError("request", _reason(error)) from None
                # The server had closed the kept-alive connection: once more on a new one.
            except TransportError:
                self._drop(connection)
                raise
        raise AssertionError("unreachable: the second attempt returns or raises")

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    def _target(self, path: str) -> str:
        target = self.base_path + path
        if self.proxy and not self.https:  # a plain-HTTP proxy takes the whole URL
            return f"http://{self.host}:{self.port}{target}"
        return target

    def _open(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        if self.proxy:
            connection = kind(*self.proxy, timeout=self.timeout)
            if self.https:
                connection.set_tunnel(self.host, self.port)
        else:
            connection = kind(self.host, self.port, timeout=self.timeout)
        try:
            connection.connect()
        except TimeoutError:
            connection.close()
            raise TransportError("timeout", "connect timed out") from None
        except OSError as error:
            connection.close()
            raise TransportError("connect", _reason(error)) from None
        self._local.connection = connection
        with self._lock:
            self._opened.append(connection)
        return connection

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None
        with self._lock:
            if connection in self._opened:
                self._opened.remove(connection)

    def _exchange(self, connection, method: str, target: str, payload: bytes | None) -> Reply:
        try:
            connection.request(method, target, body=payload, headers=self.headers)
            response = connection.getresponse()
            content = response.read()
        except _STALE:
            raise
        except TimeoutError:
            raise TransportError("timeout", "timed out") from None
        except (OSError, http.client.HTTPException) as error:
            raise TransportError("request", _reason(error)) from None
        headers = {name.lower(): value for name, value in response.getheaders()}
        if response.will_close:
            self._drop(connection)
        return Reply(response.status, content, headers)


def _proxy_for(scheme: str, host: str) -> tuple[str, int] | None:
    """(host, port) of the environment's proxy for `scheme`, unless `no_proxy` exempts `host`."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme)
    if not proxy or urllib.request.proxy_bypass_environment(host, proxies):
        return None
    parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or 80


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__
