import os

from django.core.wsgi import get_wsgi_application

from tokspeed.state import require_secret

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
# DEBUG: the per-install secret `manage.py up` uses; otherwise no SECRET_KEY stops start-up here.
require_secret()
application = get_wsgi_application()
