"""The socket side: the HTTP server and its request handler (``http``), the request-line and
header parser it uses (``request_head``), the mutual-TLS context (``tls``) and the log of whole
exchanges for ``conformance judge`` (``exchange_log``, ``--exchange-log``).

The transport layer sits above the application: it builds a ``reference_server.api.Request``
from the bytes, hands it to ``reference_server.app.Application`` and writes the ``Response``
back. Nothing below it knows there is a socket.
"""
