import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Let a transactional test's flush TRUNCATE the audit tables.

    The audit log refuses TRUNCATE by trigger (approvals migration 0006), so
    pytest-django's flush after a `transactional_db` test fails. Around this
    item's teardown only, the test connection runs with
    `session_replication_role = replica` (ordinary triggers do not fire), and is
    put back right after. Only the test database, only as its superuser.
    """
    marker = item.get_closest_marker("django_db")
    transactional = "transactional_db" in getattr(item, "fixturenames", ()) or (
        marker is not None and marker.kwargs.get("transaction"))
    if not transactional:
        yield
        return
    from django.db import connection
    from pytest_django.plugin import blocking_manager_key

    blocker = item.config.stash[blocking_manager_key]
    with blocker.unblock():
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
    try:
        yield
    finally:
        # After the last test the test database is gone already; a closed connection
        # took its session setting with it.
        if connection.connection is not None and not connection.connection.closed:
            with blocker.unblock():
                with connection.cursor() as cursor:
                    cursor.execute("SET session_replication_role = DEFAULT")
