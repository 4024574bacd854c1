"""A stdlib HTTP connection over the API's Unix socket, for scripts and the benchmark:
`UnixConnection(path).request("POST", "/v1/recall", body=...)`, as with http.client."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path | str, timeout: float = 120):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)
