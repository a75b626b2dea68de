from django.db import models


class Heartbeat(models.Model):
    """When a periodic job last finished: one row per job, overwritten each time.

    The admin dashboard reads it (today: `sweep`, written by runs/sweep.py). Not an
    audit record: only the latest beat is kept.
    """

    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()
    details = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"
