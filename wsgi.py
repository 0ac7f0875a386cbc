"""WSGI entry point for any WSGI server: ``waitress-serve wsgi:application`` or ``gunicorn wsgi:application``.

Settings come from the environment (PODSEARCH_DATA, PODSEARCH_CONFIG, ...).
"""

from podsearch.web import create_app

application = create_app()
