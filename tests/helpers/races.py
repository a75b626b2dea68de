"""Races on real PostgreSQL: calls on their own threads (so their own connections), let go together.

Use them in `transaction=True` tests: each thread's connection sees only committed rows.
"""

import threading

from django.db import connection

from tests.helpers.waits import HANG_SECONDS, wait_for


def all_at_once(calls, *, timeout: float = 60) -> list:
    """Run each callable in `calls` on its own thread, released together by a barrier.

    Each thread connects before the barrier, so the race starts at the barrier and not at
    connection set-up. Returns, in the order of `calls`, what each returned or the
    exception it raised.
    """
    barrier, outcomes = threading.Barrier(len(calls)), [None] * len(calls)

    def worker(index, call):
        try:
            connection.ensure_connection()
            barrier.wait(timeout=timeout)
            outcomes[index] = call()
        except Exception as error:  # the caller asserts on it
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(index, call)) for index, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), "a call never returned"
    return outcomes


def lock_waiters(pid) -> list:
    """What PostgreSQL backend `pid` is waiting on: `["Lock"]` while it queues for a row lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        return [row[0] for row in cursor.fetchall()]


def backend_pid() -> int:
    """This thread's PostgreSQL backend (Django connections are per thread)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def wait_until_queued(*backends) -> None:
    """Until every backend waits for a lock (PostgreSQL's wait_event_type `Lock`); each of
    `backends` is a function giving its pid once the thread has one (None before)."""

    def queued(backend) -> bool:
        pid = backend()
        return pid is not None and lock_waiters(pid) == ["Lock"]

    wait_for(
        lambda: all(queued(backend) for backend in backends),
        HANG_SECONDS,
        "a backend to queue for a lock",
        interval=0.02,
    )
