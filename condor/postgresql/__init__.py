"""Condor's database ENGINE on PostgreSQL: Django's own backend, its pool's check replaced (base.py)."""
