"""A WSGI app for the worker test: sleeps for ?s= seconds, then answers its process id."""

import os
import time
from urllib.parse import parse_qs


def application(environ, start_response):
    seconds = float(parse_qs(environ.get("QUERY_STRING", "")).get("s", ["0"])[0])
    time.sleep(min(seconds, 5.0))
    body = str(os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
