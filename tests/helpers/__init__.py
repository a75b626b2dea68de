"""Helpers shared by the suite, one module per concern (personas, the approval loop over HTTP,
thread races, Node.js). Import them from here, never from a conftest.py."""
