"""A "Redis" that accepts connections and never answers: what a hung Redis looks like to a client."""

import socket
import threading


class SilentRedis:
    def __init__(self):
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}"
        self._connections: list[socket.socket] = []
        self._received = threading.Event()
        self._stopped = False
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="silent-redis", daemon=True).start()

    def _accept(self):
        while not self._stopped:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(conn)
            threading.Thread(target=self._swallow, args=(conn,), daemon=True).start()

    def _swallow(self, conn):
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            self._received.set()  # a command came in; it will never get its reply

    def wait_for_a_command(self, timeout: float) -> bool:
        """Wait until a client has sent something (and so waits for an answer that never comes)."""
        return self._received.wait(timeout) and self.holds_a_command()

    def holds_a_command(self) -> bool:
        """A client sent something and is still connected, waiting for an answer that never comes."""
        with self._lock:
            return self._received.is_set() and any(conn.fileno() != -1 for conn in self._connections)

    def channel_layers(self, **host_options) -> dict:
        """CHANNEL_LAYERS on this Redis; `host_options` go to redis-py's connection (socket_timeout, …)."""
        return {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [{"address": self.url, **host_options}], "prefix": "condor-silent"},
            }
        }

    def stop(self):
        """Close every connection: a client still waiting gets an error and lets go."""
        self._stopped = True
        try:
            # Wakes the accept() still blocked on it: a bare close() from another thread leaves the
            # socket listening while that call holds it, and a client's next connection hangs there.
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()
        with self._lock:
            for conn in self._connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
