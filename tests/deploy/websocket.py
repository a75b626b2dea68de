"""A minimal websocket client over a plain TCP socket (RFC 6455), for sockets held by another process.

Enough for the inbox: the upgrade handshake with a session cookie and an Origin,
text frames in (fragmented or not), pings answered, a masked close out.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import socket
import struct
import time

from tests.helpers.wire import ClosedOnExit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WebSocket(ClosedOnExit):
    def __init__(self, host: str, path: str, *, headers: dict[str, str], timeout: float = 10):
        name, port = host.rsplit(":", 1)
        self.sock = socket.create_connection((name, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self._buffer = b""
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ", 2)[1])
        expected = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest())
        if self.status != 101 or expected not in head:
            raise ConnectionError(f"the websocket upgrade was refused: {head.decode(errors='replace')}")

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self._buffer += data

    def _take(self, count: int) -> bytes:
        while len(self._buffer) < count:
            self._fill()
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def _send(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)  # a client masks every frame
        length = len(payload)
        header = bytes([0x80 | opcode])
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", length)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send_json(self, message) -> None:
        self._send(0x1, json.dumps(message).encode())

    def receive_json(self, timeout: float = 10):
        """The next text message, parsed; pings are answered on the way."""
        deadline = time.monotonic() + timeout
        message = b""
        while True:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            first, second = self._take(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", self._take(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self._take(8))[0]
            payload = self._take(length)  # a server never masks
            opcode = first & 0x0F
            if opcode == 0x9:
                self._send(0xA, payload)
            elif opcode == 0x8:
                raise ConnectionError(f"the server closed the websocket: {payload!r}")
            elif opcode in (0x0, 0x1):
                message += payload
                if first & 0x80:
                    return json.loads(message)

    def receive_until(self, predicate, timeout: float = 10) -> list:
        """Messages up to and including the first that satisfies `predicate`."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            seen.append(self.receive_json(max(0.01, deadline - time.monotonic())))
            if predicate(seen[-1]):
                return seen

    def close(self) -> None:
        with contextlib.suppress(OSError):  # the server may have closed first
            self._send(0x8, struct.pack("!H", 1000))
        self.sock.close()
