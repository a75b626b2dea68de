"""Under CI a skip is a failure: a missing node, chromium or Redis must not pass as green.

A pytest plugin (loaded by tests/conftest.py) so it can be tested on its own.
"""

import os


def _skipped(config) -> list:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return reporter.stats.get("skipped", []) if reporter is not None else []


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("CI") and _skipped(session.config) and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = _skipped(config)
    if os.environ.get("CI") and skipped:
        terminalreporter.section("skips fail the run under CI", sep="=", red=True, bold=True)
        for report in skipped:
            terminalreporter.line(f"{report.nodeid} {report.longrepr[-1] if report.longrepr else ''}")
