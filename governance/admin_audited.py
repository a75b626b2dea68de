"""Admin pages whose every save and delete leaves an audit row, in the admin's own transaction.

Governance edits in the admin decide who sees which card (review teams) and which
runtime may call the API and park runs (API clients and their keys); compliance must
be able to read each change back, before and after. A page opts in with
`AuditedChangesAdmin`, naming its audit kind, the key its rows carry the object's id
under, and a snapshot of the fields that matter (never a secret).
"""

from django.db import transaction

from audit import trail as audit


class AuditedChangesAdmin:
    """Mixin for a ModelAdmin: created / updated / deleted rows with the object before and after."""

    audit_kind: str
    audit_id_key: str  # e.g. "team_id": the name the object's id goes under in the row's data

    def audit_snapshot(self, obj) -> dict:
        raise NotImplementedError

    def audit_object_id(self, obj):
        """How the row names the object; override where the primary key holds a secret."""
        return obj.pk if isinstance(obj.pk, int) else str(obj.pk)

    def _snapshot_of_saved(self, obj) -> dict | None:
        return self.audit_snapshot(obj) if obj is not None and obj.pk is not None else None

    def save_model(self, request, obj, form, change):
        # Read before the form's values are written: the audit row shows what changed.
        stored = type(obj)._default_manager.filter(pk=obj.pk).first() if change else None
        request._audit_before = self._snapshot_of_saved(stored)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)  # many-to-many fields are saved here
        before, after = request._audit_before, self._snapshot_of_saved(form.instance)
        if before != after:
            self._record(
                request, "updated" if change else "created", self.audit_object_id(form.instance), before, after
            )

    def delete_model(self, request, obj):
        object_id, before = self.audit_object_id(obj), self._snapshot_of_saved(obj)
        super().delete_model(request, obj)
        self._record(request, "deleted", object_id, before, None)

    def delete_queryset(self, request, queryset):
        # One audit row per object, not a silent bulk delete; all of them or none.
        with transaction.atomic():
            for obj in queryset:
                self.delete_model(request, obj)

    def _record(self, request, decision: str, object_id, before, after):
        audit.record(
            self.audit_kind,
            actor_user=request.user,
            decision=decision,
            data={self.audit_id_key: object_id, "before": before, "after": after},
        )
