"""The reference for bench/hotpaths.py: a bare DRF view doing one INSERT, no auth, no middleware to speak of."""

import os

import dj_database_url

SECRET_KEY = "bench-only"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = ["rest_framework"]
ROOT_URLCONF = "bench.bare.urls"
# The same psycopg pool Condor's settings use, so only the work per request differs.
DATABASES = {"default": {**dj_database_url.parse(os.environ["DATABASE_URL"]), "CONN_MAX_AGE": 0,
                         "CONN_HEALTH_CHECKS": True,
                         "OPTIONS": {"pool": {"min_size": 2, "max_size": 20, "timeout": 10}}}}
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": [], "DEFAULT_PERMISSION_CLASSES": [],
                  "UNAUTHENTICATED_USER": None}
USE_TZ = True
