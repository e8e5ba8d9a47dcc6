"""A machine without the network, for the tests of what needs none: name lookups of any host but this one fail as
they do offline ("Temporary failure in name resolution"), and connections to any address but loopback are refused
as unreachable. In this process (`block_network`, for a test's monkeypatch) or in every Python process a command
starts (`offline_environment`: a sitecustomize.py on PYTHONPATH, so Snakemake's jobs are offline too). The tests
never reach the real network either way."""

from __future__ import annotations

import os
from pathlib import Path

_SITECUSTOMIZE = """
import errno
import socket

_LOCAL = {"localhost", "127.0.0.1", "::1", ""}
_getaddrinfo, _connect = socket.getaddrinfo, socket.socket.connect


def _offline_getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in _LOCAL and not name.startswith("127."):
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution (tests/helpers/offline.py)")
    return _getaddrinfo(host, *args, **kwargs)


def _offline_connect(self, address):
    host = address[0] if isinstance(address, tuple) else ""
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOCAL and not str(host).startswith("127."):
        raise OSError(errno.ENETUNREACH, "Network is unreachable (tests/helpers/offline.py)")
    return _connect(self, address)


socket.getaddrinfo = _offline_getaddrinfo
socket.socket.connect = _offline_connect
"""


#: A proxy on this machine would carry requests out: offline means without one.
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def block_network(monkeypatch) -> None:
    """This process offline for the rest of the test (pytest's monkeypatch undoes it)."""
    namespace: dict = {}
    import socket

    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    monkeypatch.setattr(socket, "getaddrinfo", socket.getaddrinfo)  # restored afterwards, whatever the code below sets
    monkeypatch.setattr(socket.socket, "connect", socket.socket.connect)
    exec(compile(_SITECUSTOMIZE, "offline-sitecustomize", "exec"), namespace)


def offline_environment(folder: Path, environ: dict[str, str]) -> dict[str, str]:
    """`environ` with `folder`/sitecustomize.py first on PYTHONPATH: every Python process started with it is offline."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(folder), environ.get("PYTHONPATH", "")) if p)
    return {**{k: v for k, v in environ.items() if k not in PROXY_VARIABLES}, "PYTHONPATH": path}
