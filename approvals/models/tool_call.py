from django.db import models


class ToolCall(models.Model):
    """The ledger of gated calls: what was asked, what the gate said, what came back."""

    # No index of its own: one_tool_call_per_id (run, tool_call_id) leads with the run and
    # serves every lookup by run (the ledger upsert, history, the cascade).
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="tool_calls", db_index=False)
    tool_call_id = models.CharField(max_length=120)
    step_id = models.CharField(max_length=120)
    tool = models.CharField(max_length=120)
    op = models.CharField(max_length=60, blank=True)
    args = models.JSONField(default=dict)
    metadata = models.JSONField(default=dict, blank=True)
    decision = models.CharField(max_length=24)
    rule_id = models.CharField(max_length=80)
    # Trust of the tool as the gate resolved it: an untrusted tool's result taints the session.
    untrusted_tool = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # The result, once the agent reports it.
    output = models.JSONField(null=True, blank=True)
    is_error = models.BooleanField(default=False)
    untrusted_result = models.BooleanField(default=False)
    entities = models.JSONField(default=list, blank=True)
    cards = models.JSONField(default=list, blank=True)
    reported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["run", "tool_call_id"], name="one_tool_call_per_id"),
        ]
