"""What the suite's hand-made wire clients (tests/live/wire.py, tests/deploy/websocket.py) share."""

from __future__ import annotations


class ClosedOnExit:
    """`with client:` closes it at the end, however the block ended."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
