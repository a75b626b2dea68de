"""Entity linkage: the one service that writes a session's current entity per kind."""

from django.utils import timezone

from core.errors import InvalidPayload
from sessions_app.models import EntityKind, LinkedEntity


def validate_entities(entities: list) -> list[dict]:
    """Each `{kind, id, label?}` with kind one of the five link types; anything else is refused."""
    clean = []
    for index, entity in enumerate(entities):
        if not isinstance(entity, dict) or sorted(set(entity) - {"kind", "id", "label"}):
            raise InvalidPayload(f"entities[{index}] must be an object {{kind, id, label?}}.")
        kind, ref, label = entity.get("kind"), entity.get("id"), entity.get("label", "")
        if kind not in EntityKind.values:
            raise InvalidPayload(f"entities[{index}].kind must be one of: {', '.join(EntityKind.values)}.")
        if not isinstance(ref, str) or not 0 < len(ref) <= 200:
            raise InvalidPayload(f"entities[{index}].id must be a string of 1 to 200 characters.")
        if not isinstance(label, str) or len(label) > 200:
            raise InvalidPayload(f"entities[{index}].label must be a string of at most 200 characters.")
        clean.append({"kind": kind, "ref": ref, "label": label})
    return clean


def promote_latest(session_id, run_id, tool_call_id: str, entities: list) -> list[LinkedEntity]:
    """Make the entities a tool result resolved the session's current ones, one per kind.

    Inside the result's transaction (which holds the session lock). Within one
    result the last entity of a kind wins; a later result replaces an earlier one.
    """
    latest = {entity["kind"]: entity for entity in validate_entities(entities)}
    if not latest:
        return []
    now = timezone.now()
    rows = [
        LinkedEntity(session_id=session_id, run_id=run_id, tool_call_id=tool_call_id, linked_at=now, **entity)
        for entity in latest.values()
    ]
    return LinkedEntity.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["session", "kind"],
        update_fields=["ref", "label", "run_id", "tool_call_id", "linked_at"],
    )
