"""A local HTTP server for tests that need one (a fake hub, a release to download, a host that answers)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler], poll_interval: float = 0.5) -> Iterator[str]:
    """`handler` answering on a free port of 127.0.0.1, each request in a thread of its own; yields the base URL
    (`http://127.0.0.1:<port>`), and shuts the server down and closes its socket afterwards."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
