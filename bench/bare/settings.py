"""The reference for bench/hotpaths.py: a bare DRF view doing one INSERT, no auth, no middleware to speak of."""

import os
from pathlib import Path

from condor.database_settings import database

SECRET_KEY = "bench-only"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = ["rest_framework"]
ROOT_URLCONF = "bench.bare.urls"
# Condor's own database settings (pool, health check, server-side binding, prepared statements),
# so only the work per request differs.
DATABASES = {"default": database(os.environ["DATABASE_URL"], sqlite_path=Path("unused.sqlite3"))}
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": [], "DEFAULT_PERMISSION_CLASSES": [],
                  "UNAUTHENTICATED_USER": None}
USE_TZ = True
