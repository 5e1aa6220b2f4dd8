"""The console page's HTTP server (the standard library's ThreadingHTTPServer): GET of the files of `web/` only,
by a fixed list, plus `console.json` (where the page finds the console's WebSocket server). No other path, no
directory listing, no file outside `web/`, no other method.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WEB_DIR = Path(__file__).with_name("web")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css",
         ".png": "image/png", ".svg": "image/svg+xml"}  # fmt: skip


def served_files(root: Path = WEB_DIR) -> dict[str, Path]:
    """URL path -> file, for every file under `root` with a known type (read once, at start)."""
    files = {"/" + p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.suffix in TYPES and p.is_file()}
    files["/"] = root / "index.html"
    return files


class PageServer:
    """Serves the page on (host, port) in a daemon thread; `config`: the JSON of /console.json."""

    def __init__(self, host: str, port: int, config: dict) -> None:
        files, body = served_files(), json.dumps(config).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                path = self.path.split("?", 1)[0]
                if path == "/console.json":
                    return self._send(body, "application/json")
                file = files.get(path)
                if file is None:
                    return self.send_error(HTTPStatus.NOT_FOUND, "not a file of the console page")
                self._send(file.read_bytes(), TYPES[file.suffix])

            def _send(self, data: bytes, content_type: str) -> None:
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args) -> None:  # quiet: the node logs what matters
                pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="console-page", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
