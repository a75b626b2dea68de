from celery import shared_task
from django.conf import settings

from audit import checkpoints as audit_checkpoints


@shared_task(name="condor.audit_checkpoint", ignore_result=True)
def audit_checkpoint():
    """A checkpoint of the audit chains' heads, on Celery beat's schedule (CONDOR_AUDIT_CHECKPOINT_SECONDS)."""
    line = audit_checkpoints.write(settings.CONDOR_AUDIT_CHECKPOINT_FILE)
    return {"heads": len(line["heads"])}
