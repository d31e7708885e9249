"""Runs the samebits page in Debian's Chromium through Playwright and checks it.

    python web/run_browser.py                  # every suite (gemm, conv, ops), exact and fast
    python web/run_browser.py --suites conv    # the convolution suite only
    python web/run_browser.py --flip 5         # negative control: must report a mismatch

Serves web/ and wasm/out/ on 127.0.0.1, opens web/index.html in headless
Chromium, prints the browser's hash lines as they arrive, saves a screenshot
(web/out/page.png) and exits 1 when an exact-mode line differs from native
(with --flip: when none does). The native lines come from web/out/native.json
(made by web/make_native.py, and made here first when missing).

Needs: bash wasm/build.sh, npm ci in web/, pip install playwright, and
/usr/bin/chromium (Debian's chromium package). Requests to any host other
than 127.0.0.1 are refused and reported: the page must load nothing remote.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode, urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from serve import serve  # noqa: E402

CHROMIUM = os.environ.get("SAMEBITS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
NATIVE_JSON = HERE / "out" / "native.json"
WHEEL_JSON = ROOT / "wasm" / "out" / "wheel.json"
PYODIDE_DIR = HERE / "node_modules" / "pyodide"


def missing_prerequisites() -> list[str]:
    """What must exist before the page can run, in words; empty when all is there."""
    missing = []
    if not WHEEL_JSON.is_file():
        missing.append(f"the samebits wasm wheel ({WHEEL_JSON.relative_to(ROOT)}): "
                       "run bash wasm/build.sh")
    else:
        wheel = WHEEL_JSON.parent / json.loads(WHEEL_JSON.read_text())["wheel"]
        if not wheel.is_file():
            missing.append(f"{wheel.relative_to(ROOT)}: run bash wasm/build.sh")
    if not (PYODIDE_DIR / "pyodide.mjs").is_file():
        missing.append("Pyodide from npm (web/node_modules/pyodide): run npm ci in web/")
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"Chromium ({CHROMIUM}): apt-get install chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("Python Playwright: pip install playwright")
    return missing



def open_local_page(browser, blocked: list, console: list, **page_options):
    """A new page that may load only from 127.0.0.1 (other requests are aborted
    and listed in `blocked`) and whose errors and warnings go to `console`."""
    page = browser.new_page(**page_options)

    def guard(route):
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    return page

@contextlib.contextmanager
def local_browser_page(extra: dict | None = None, isolated: bool = True, **page_options):
    """A fresh headless Chromium with one page that may load only from the
    127.0.0.1 server this starts (serving web/, wasm/out/, js/ and `extra`;
    cross-origin isolated unless isolated=False). Yields a LocalPage; the
    browser and the server stop on exit."""
    from playwright.sync_api import sync_playwright

    server, base = serve(extra=extra, isolated=isolated)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                        headless=True)
            try:
                blocked: list[str] = []
                console: list[str] = []
                page = open_local_page(browser, blocked, console, **page_options)
                yield LocalPage(page, base, blocked, console, browser.version)
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


class LocalPage(NamedTuple):
    page: Any
    base: str                  # the server's http://127.0.0.1:PORT
    blocked: list              # remote URLs the page asked for (refused)
    console: list              # its console errors and warnings
    browser_version: str


def run_page(query: dict | None = None, native: dict | None = None, timeout_s: float = 900,
             screenshot: Path | None = None, on_row=None) -> dict:
    """Opens the page with `query` and returns window.samebitsResult when it is done.

    native: a {"header", "lines"} document served to the page instead of
    web/out/native.json. on_row(row) is called for each new line as it comes.
    The result gains "blocked" (remote URLs refused), "console" (the page's
    console errors) and "wall_s".
    """
    query = dict(query or {})
    extra = {}
    if native is not None:
        extra["/native-lines.json"] = (json.dumps(native).encode(), "application/json")
        query["native"] = "/native-lines.json"
    start = time.monotonic()
    with local_browser_page(extra, viewport={"width": 1400, "height": 900}) as local:
        page = local.page
        url = f"{local.base}/web/index.html" + (f"?{urlencode(query)}" if query else "")
        page.goto(url, wait_until="load")
        seen = 0
        deadline = start + timeout_s
        while True:
            state = page.evaluate("window.samebitsResult && {done: window.samebitsResult.done,"
                                  " rows: window.samebitsResult.rows}")
            rows = (state or {}).get("rows") or []
            for row in rows[seen:]:
                if on_row:
                    on_row(row)
            seen = len(rows)
            if state and state.get("done"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page did not finish within {timeout_s:.0f} s "
                                   f"({seen} lines so far); console: {local.console[-5:]}")
            page.wait_for_timeout(500)
        result = page.evaluate("window.samebitsResult")
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
    result["blocked"] = local.blocked
    result["console"] = local.console
    result["wall_s"] = time.monotonic() - start
    return result


def run_until_done(page_path: str, result_name: str, timeout_s: float,
                   extra: dict | None = None, isolated: bool = True,
                   probe: str | None = None, on_poll=None) -> dict:
    """Opens web/<page_path> and returns window.<result_name> once its `done`
    is set, with "blocked", "console", "wall_s" and "browser_version" added.
    probe: a JS expression evaluated every poll (default: the `done` flag),
    whose value (an object with "done") on_poll(state) receives, to report
    progress while the page runs."""
    probe = probe or f"window.{result_name} && {{done: window.{result_name}.done}}"
    start = time.monotonic()
    with local_browser_page(extra, isolated) as local:
        page = local.page
        page.goto(f"{local.base}/web/{page_path}", wait_until="load")
        deadline = start + timeout_s
        while True:
            state = page.evaluate(probe)
            if on_poll and state:
                on_poll(state)
            if state and state.get("done"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"web/{page_path} did not finish within {timeout_s:.0f} s; "
                                   f"console: {local.console[-5:]}")
            page.wait_for_timeout(300)
        result = page.evaluate(f"window.{result_name}")
        result["browser_version"] = local.browser_version
    result["blocked"], result["console"] = local.blocked, local.console
    result["wall_s"] = time.monotonic() - start
    return result


def run_models_page(query: dict | None = None, timeout_s: float = 900) -> dict:
    """Opens web/models.html (the models suite over web/out/models, made by
    web/make_models.py) and returns window.modelsResult when it is done."""
    return run_until_done("models.html" + (f"?{urlencode(query)}" if query else ""),
                           "modelsResult", timeout_s)


def run_js_check_page(query: dict, native: dict, isolated: bool = True,
                      timeout_s: float = 600) -> dict:
    """Opens web/js-check.html (the npm package's hash suites, in a worker)
    with `query` and the native lines `native` ({"lines": [...]}) served to
    it; returns window.jsCheckResult when it is done."""
    extra = {"/native-js.json": (json.dumps(native).encode(), "application/json")}
    query = {**query, "native": "/native-js.json"}
    return run_until_done(f"js-check.html?{urlencode(query)}", "jsCheckResult", timeout_s,
                           extra, isolated)


def run_pytest_page(case: dict, timeout_s: float = 300) -> dict:
    """Opens web/pytest.html with `case` ({"files": {name: text}, "args": [...]})
    served to it, and returns window.pytestResult when pytest has finished."""
    extra = {"/pytest-case.json": (json.dumps(case).encode(), "application/json")}
    return run_until_done("pytest.html?case=/pytest-case.json", "pytestResult", timeout_s,
                           extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flip", type=int, help="flip this output bit (negative control)")
    parser.add_argument("--modes", default="exact,fast")
    parser.add_argument("--suites", default="gemm,conv,ops",
                        help="hash suites (gemm, conv, ops)")
    parser.add_argument("--groups", default="sweep,random,models", help="gemm suite groups")
    parser.add_argument("--speed", type=int, default=512, help="speed-line size (0: none)")
    parser.add_argument("--native", type=Path, default=NATIVE_JSON,
                        help="native lines JSON (default web/out/native.json, made when missing)")
    parser.add_argument("--screenshot", type=Path, default=HERE / "out" / "page.png")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the whole page")
    args = parser.parse_args(argv)

    missing = missing_prerequisites()
    if missing:
        print("run_browser.py: missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    if not args.native.is_file():
        print(f"run_browser.py: {args.native} is missing; making it (python web/make_native.py)",
              file=sys.stderr)
        from make_native import write_native
        write_native(args.native, [])
    native = json.loads(args.native.read_text())
    stored = set(native.get("headers") or {}) or {"gemm"}
    if args.groups != "sweep,random,models" or not set(args.suites.split(",")) <= stored:
        # The stored lines are of the whole gemm suite (and maybe not of every
        # suite asked for): make native lines of these suites and groups.
        from make_native import native_hashes
        native = native_hashes(["--suites", args.suites, "--groups", args.groups,
                                "--modes", args.modes])
    query = {"suites": args.suites, "modes": args.modes, "groups": args.groups,
             "speed": args.speed}
    if args.flip is not None:
        query["flip"] = args.flip

    def show(row):
        print(f"{row['line']}  # {row['seconds']:.1f} s, {row['verdict']}", flush=True)

    result = run_page(query, native, args.timeout, args.screenshot, on_row=show)
    for header in (result.get("headers") or {}).values():
        print(f"{header} (browser: Pyodide {result.get('pyodide')})")
    if result.get("speed"):
        s = result["speed"]
        parts = [f"{m} {2 * s['n'] ** 3 / t / 1e9:.1f} GFLOP/s" for m, t in s["seconds"].items()]
        print(f"speed {s['n']}^3 {s['path']} 1 thread: " + ", ".join(parts))
    print(f"page done in {result['wall_s']:.1f} s; screenshot {args.screenshot}")
    for row in result["rows"]:
        print(f"  browser {row['line']}\n  native  {row['native']}  -> {row['verdict']}")
    if result.get("blocked"):
        print(f"run_browser.py: the page asked for remote URLs: {result['blocked']}", file=sys.stderr)
    if result.get("error"):
        print(f"run_browser.py: page error: {result['error']}", file=sys.stderr)
        for line in result["console"]:
            print(f"  {line}", file=sys.stderr)
        return 1
    exact = [r for r in result["rows"] if r["mode"] == "exact"]
    bad = [r for r in exact if not r["match"]]
    if args.flip is not None:
        if exact and all(r["verdict"] == "mismatch" for r in exact) and not result["ok"]:
            print(f"negative control: flipping bit {args.flip} made every exact line "
                  f"({len(exact)}) differ from native, as it must")
            return 0
        print("run_browser.py: negative control FAILED: a flipped bit went unnoticed",
              file=sys.stderr)
        return 1
    if not exact or bad or not result["ok"] or result.get("blocked"):
        print(f"run_browser.py: {len(bad)} of {len(exact)} exact lines differ from native",
              file=sys.stderr)
        return 1
    print(f"OK: every exact line computed in Chromium ({len(exact)}) has the native bits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
