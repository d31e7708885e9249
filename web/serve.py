"""A small static server for the samebits page, on 127.0.0.1 only.

    python web/serve.py [--port 8000]     # then open http://127.0.0.1:8000/ (web/home.html)

Serves the repository's web/, wasm/out/ and js/ folders (nothing else), with
the types Pyodide needs (.wasm as application/wasm, .mjs as JavaScript) and
no caching, so a rebuilt wheel is always the one loaded. Tests use serve() in
a thread, with a free port and optional in-memory files (e.g. native lines).

Every answer carries the cross-origin isolation headers (COOP same-origin,
COEP require-corp), without which a browser gives a page no
SharedArrayBuffer and so no threads; --no-isolation (serve(isolated=False))
leaves them out, to see a page fall back to one thread.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ("/web/", "/wasm/out/", "/js/")
TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".so": "application/wasm",
    ".html": "text/html; charset=utf-8",
    ".map": "application/json",
}


class Mailbox:
    """What pages send the server: POSTed reports ({path: body}) and the remote
    URLs a browser asked for through the server as its proxy (refused)."""

    def __init__(self) -> None:
        self.reports: dict[str, bytes] = {}
        self.blocked: list[str] = []
        self.lock = threading.Lock()


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    extra: dict[str, tuple[bytes, str]] = {}

    def __init__(self, *args, extra=None, isolated=True, mailbox=None, **kwargs):
        self.extra = extra or {}
        self.isolated = isolated
        self.mailbox = mailbox
        super().__init__(*args, **kwargs)

    def _refuse_remote(self) -> bool:
        """A proxy request (absolute URL, or CONNECT) for another host: listed
        in the mailbox and refused. True when handled."""
        if self.command != "CONNECT" and not self.path.startswith(("http://", "https://")):
            return False
        if self.command != "CONNECT":   # this server asked for through the proxy: serve it
            url = urlsplit(self.path)
            if url.hostname == "127.0.0.1" and url.port == self.server.server_address[1]:
                self.path = url.path + (f"?{url.query}" if url.query else "")
                return False
        if self.mailbox is not None:
            with self.mailbox.lock:
                self.mailbox.blocked.append(self.path)
        self.send_error(403, "remote requests are refused")
        return True

    def do_POST(self):
        """POST /report/...: the body is kept in the mailbox (report.mjs)."""
        if self._refuse_remote():
            return
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        if self.mailbox is None or not path.startswith("/report/") or not 0 <= length <= 1 << 26:
            self.send_error(404, "not served")
            return
        body = self.rfile.read(length)
        with self.mailbox.lock:
            self.mailbox.reports[path] = body
        self.send_response(204)
        self.end_headers()

    def do_CONNECT(self):
        self._refuse_remote()

    def _route(self) -> bool:
        """Answers in-memory files and refuses paths outside ALLOWED; True when handled."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in self.extra:
            body, ctype = self.extra[path]
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return True
        if path == "/":
            self.send_response(302)
            self.send_header("Location", "/web/home.html")
            self.end_headers()
            return True
        if not path.startswith(ALLOWED) or ".." in path:
            self.send_error(404, "not served")
            return True
        return False

    def do_GET(self):
        if not self._refuse_remote() and not self._route():
            super().do_GET()

    def do_HEAD(self):
        if not self._refuse_remote() and not self._route():
            super().do_HEAD()

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        super().end_headers()

    def log_message(self, format, *args):  # quiet: tests print what matters
        pass


def serve(port: int = 0, extra: dict[str, tuple[bytes, str]] | None = None,
          root: Path = ROOT, isolated: bool = True,
          mailbox: Mailbox | None = None) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Starts the server in a daemon thread; returns (server, base URL).
    Call server.shutdown() when done. port=0 picks a free port; isolated=False
    leaves out the cross-origin isolation headers; a mailbox receives POSTed
    reports and the remote requests refused."""
    handler = functools.partial(Handler, directory=str(root), extra=extra, isolated=isolated,
                                mailbox=mailbox)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="samebits-serve", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-isolation", action="store_true",
                        help="leave out the COOP/COEP headers (pages then get one thread)")
    args = parser.parse_args(argv)
    server, base = serve(args.port, isolated=not args.no_isolation)
    print(f"serving {ROOT}/web, wasm/out and js at {base}/web/home.html (Ctrl-C stops)",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
