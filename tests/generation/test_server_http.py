"""The inference-server engine's HTTP client (`generation.engines.server_http`), against raw
loopback servers that control when connections close."""

import base64
import json
import socket
import threading
from collections.abc import Callable

import pytest

from generation.engines.server_http import KeepAliveClient, TransportError
from tests.generation.server_fixtures import free_port


def _read_request(connection: socket.socket) -> bytes | None:
    """One HTTP request's bytes (head and body), or None when the client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body


def _answer(payload: dict, *, close: bool = False) -> bytes:
    body = json.dumps(payload).encode()
    extra = b"Connection: close\r\n" if close else b""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


class RawServer:
    """Accepts connections on loopback; `serve(connection, number)` runs for each, in a thread.
    `requests` holds every request's head and body as received, `connections` the count."""

    def __init__(self, serve: Callable[["RawServer", socket.socket, int], None]) -> None:
        self.serve = serve
        self.requests: list[bytes] = []
        self.connections = 0
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "RawServer":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._socket.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(
                target=self._serve, args=(connection, self.connections), daemon=True
            ).start()

    def _serve(self, connection: socket.socket, number: int) -> None:
        with connection:
            self.serve(self, connection, number)

    def next_request(self, connection: socket.socket) -> bytes | None:
        request = _read_request(connection)
        if request is not None:
            self.requests.append(request)
        return request


def keep_alive(server: RawServer, connection: socket.socket, number: int) -> None:
    """Answers every request on the connection, saying which connection it came on."""
    while server.next_request(connection) is not None:
        connection.sendall(_answer({"connection": number}))


def one_answer_then_silent_close(server: RawServer, connection: socket.socket, number: int):
    """Answers one request as if the connection stayed open, then closes it (an idle
    timeout on the server's side)."""
    if server.next_request(connection) is not None:
        connection.sendall(_answer({"connection": number}))


def drop_every_request(server: RawServer, connection: socket.socket, number: int) -> None:
    """Reads a request and closes the connection without a word."""
    server.next_request(connection)


def _client(url: str, headers: dict | None = None, timeout: float = 5) -> KeepAliveClient:
    return KeepAliveClient(url, headers=headers or {}, timeout=timeout)


def test_requests_of_one_thread_share_one_kept_alive_connection():
    with RawServer(keep_alive) as server:
        client = _client(server.url)
        replies = [client.request("POST", "/completions", {"n": i}) for i in range(5)]
        client.close()

    assert [reply.json() for reply in replies] == [{"connection": 1}] * 5
    assert server.connections == 1
    assert all(request.startswith(b"POST /v1/completions HTTP/1.1") for request in server.requests)
    assert json.loads(server.requests[3].split(b"\r\n\r\n", 1)[1]) == {"n": 3}


def test_each_thread_has_its_own_connection_and_close_closes_them_all():
    with RawServer(keep_alive) as server:
        client = _client(server.url)
        seen = []
        threads = [
            threading.Thread(target=lambda: seen.append(client.request("GET", "/models").json()))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        opened = list(client._opened)
        client.close()

    assert sorted(reply["connection"] for reply in seen) == [1, 2, 3]
    assert len(opened) == 3 and all(connection.sock is None for connection in opened)
    assert client._opened == []


def test_a_connection_the_server_closed_while_idle_is_replaced_and_the_request_sent_again():
    with RawServer(one_answer_then_silent_close) as server:
        client = _client(server.url)
        first = client.request("POST", "/completions", {"prompt": "a"})
        second = client.request("POST", "/completions", {"prompt": "b"})

    assert (first.json(), second.json()) == ({"connection": 1}, {"connection": 2})
    bodies = [json.loads(request.split(b"\r\n\r\n", 1)[1]) for request in server.requests]
    assert bodies == [{"prompt": "a"}, {"prompt": "b"}]  # "b" answered once, on connection 2


def test_a_server_that_drops_a_new_connection_is_a_failure_at_once():
    with RawServer(drop_every_request) as server:
        client = _client(server.url)
        with pytest.raises(TransportError) as caught:
            client.request("POST", "/completions", {"prompt": "a"})

    assert caught.value.kind == "request"
    assert server.connections == 1  # not sent again: the connection was not a stale one


def test_a_stale_connection_is_replaced_once_only():
    def answer_first_then_drop(server, connection, number):
        if number == 1:
            one_answer_then_silent_close(server, connection, number)
        else:
            drop_every_request(server, connection, number)

    with RawServer(answer_first_then_drop) as server:
        client = _client(server.url)
        client.request("GET", "/models")
        with pytest.raises(TransportError) as caught:
            client.request("POST", "/completions", {"prompt": "b"})

    assert caught.value.kind == "request"
    assert server.connections == 2


def test_connection_close_from_the_server_opens_a_new_connection_next_time():
    def close_after_each(server, connection, number):
        if server.next_request(connection) is not None:
            connection.sendall(_answer({"connection": number}, close=True))

    with RawServer(close_after_each) as server:
        client = _client(server.url)
        replies = [client.request("GET", "/models").json() for _ in range(3)]

    assert replies == [{"connection": 1}, {"connection": 2}, {"connection": 3}]
    assert client._opened == []


def test_nothing_listening_is_a_connect_failure():
    client = _client(f"http://127.0.0.1:{free_port()}/v1")

    with pytest.raises(TransportError) as caught:
        client.request("GET", "/models")

    assert caught.value.kind == "connect"


def test_a_server_that_does_not_answer_in_time_is_a_timeout():
    def silent(server, connection, number):
        server.next_request(connection)
        threading.Event().wait(2)

    with RawServer(silent) as server:
        client = _client(server.url, timeout=0.2)
        with pytest.raises(TransportError) as caught:
            client.request("POST", "/completions", {})

    assert caught.value.kind == "timeout"


def test_a_user_and_password_in_the_url_are_sent_as_basic_auth_and_a_key_replaces_them():
    with RawServer(keep_alive) as server:
        url = f"http://ann%40lab:pa%3Ass@127.0.0.1:{server.port}/v1"
        _client(url).request("GET", "/models")
        _client(url, headers={"Authorization": "Bearer k"}).request("GET", "/models")

    token = base64.b64encode(b"ann@lab:pa:ss").decode()
    assert f"Authorization: Basic {token}".encode() in server.requests[0]
    assert b"Authorization: Bearer k" in server.requests[1]
    assert b"Basic" not in server.requests[1]


def test_an_http_proxy_from_the_environment_gets_the_whole_url(monkeypatch):
    with RawServer(keep_alive) as proxy:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        _client("http://gpu-box.example:8000/v1").request("GET", "/models")

    assert proxy.requests[0].startswith(b"GET http://gpu-box.example:8000/v1/models HTTP/1.1")


def test_no_proxy_exempts_a_host(monkeypatch):
    with RawServer(keep_alive) as server:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{free_port()}")
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        reply = _client(server.url).request("GET", "/models")

    assert reply.json() == {"connection": 1}


def test_a_url_that_is_not_http_is_refused():
    with pytest.raises(ValueError, match="Not an http"):
        _client("ftp://gpu-box/v1")
