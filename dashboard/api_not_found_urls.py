"""Mounted at /api/ after every API route (tokspeed/urls.py): the rest answers a JSON 404."""

from django.urls import re_path

from .api.not_found import api_not_found

urlpatterns = [re_path(r"^(?P<rest>.*)$", api_not_found)]
