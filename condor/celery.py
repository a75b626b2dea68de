import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")

app = Celery("condor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each app's tasks.py: condor's sweep pass, audit's checkpoint
