"""One runner for the three browser engines: Chromium (V8, through
Playwright: run_browser.py), Firefox (SpiderMonkey) and WebKit
(JavaScriptCore).

    python web/engines.py firefox index.html samebitsResult   # runs a page, prints its result

Nothing is downloaded: Debian's packages only (`apt-get install firefox-esr
webkit2gtk-driver xvfb`, and selenium from PyPI). Each engine opens a page
of web/ from the 127.0.0.1 test server (web/serve.py, cross-origin isolated
unless asked not to be) and waits until the page's result object
(window[name]) is done:

- **chromium**: Debian's chromium through Playwright (run_browser.py, whose
  tests, tests/hosts/test_browser.py, drive Chromium's pages directly).
- **firefox**: Debian's firefox-esr, headless and driverless (Firefox has no
  Debian WebDriver). The page POSTs its result to the server (report.mjs,
  ?report=PATH). The profile sends every request for another host through
  the test server as a proxy, which refuses it and lists it as blocked; the
  page's console goes to Firefox's stdout (kept for errors).
- **webkit**: WebKitGTK's MiniBrowser driven by WebKitWebDriver through
  selenium, on an Xvfb display; the result is read from the page. Remote
  requests go through the same refusing proxy.

Every result gains "engine", "browser_version", "blocked" (the page's
requests for other hosts, refused), "console" and "wall_s"; Firefox's also
"browser_services", the requests Firefox itself made to Mozilla's services
(refused too: some prefs cannot stop them).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from serve import Mailbox, serve  # noqa: E402

ENGINES = ("chromium", "firefox", "webkit", "webkit-sab")
# WebKitGTK sets crossOriginIsolated but leaves JavaScriptCore's
# SharedArrayBuffer off; Safari turns it on under COOP/COEP. "webkit-sab" is
# WebKitGTK with JavaScriptCore's own option for it (JSC_useSharedArrayBuffer),
# to run the threaded module on JavaScriptCore as Safari would.
JSC_SHARED = {"JSC_useSharedArrayBuffer": "1"}
FIREFOX = os.environ.get("SAMEBITS_FIREFOX", "/usr/bin/firefox-esr")
WEBKIT_DRIVER = os.environ.get("SAMEBITS_WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver")
MINIBROWSER = os.environ.get("SAMEBITS_MINIBROWSER",
                             "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")
XVFB = shutil.which("Xvfb") or "/usr/bin/Xvfb"


def missing_prerequisites(engine: str) -> list[str]:
    """What the engine needs that is not here, in words; empty when all is there."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "chromium":
        import run_browser
        return [m for m in run_browser.missing_prerequisites()
                if "Chromium" in m or "Playwright" in m]
    missing = []
    if engine == "firefox" and not os.access(FIREFOX, os.X_OK):
        missing.append(f"Firefox ({FIREFOX}): apt-get install firefox-esr")
    if engine.startswith("webkit"):
        for path, package in ((WEBKIT_DRIVER, "webkit2gtk-driver"), (MINIBROWSER, "webkit2gtk-driver"),
                              (XVFB, "xvfb")):
            if not os.access(path, os.X_OK):
                missing.append(f"{path}: apt-get install {package}")
        try:
            import selenium  # noqa: F401
        except ImportError:
            missing.append("selenium: pip install 'selenium<4.53'")
    return missing


def _firefox_version() -> str:
    out = subprocess.run([FIREFOX, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip().removeprefix("Mozilla ")   # "Firefox 153.8.0esr"


def _firefox_profile(directory: Path, port: int) -> None:
    """Prefs of a quiet test profile: no updates, telemetry or first-run pages;
    other hosts only through the test server (which refuses them); the
    page's console on stdout."""
    prefs = {
        "app.update.auto": False, "app.update.enabled": False,
        "browser.shell.checkDefaultBrowser": False,
        "browser.startup.homepage_override.mstone": "ignore",
        "browser.aboutwelcome.enabled": False, "browser.sessionstore.resume_from_crash": False,
        "datareporting.policy.dataSubmissionEnabled": False,
        "datareporting.healthreport.uploadEnabled": False, "toolkit.telemetry.enabled": False,
        "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
        "extensions.update.enabled": False, "browser.safebrowsing.malware.enabled": False,
        "browser.safebrowsing.phishing.enabled": False, "media.gmp-manager.url": "",
        "network.proxy.type": 1, "network.proxy.http": "127.0.0.1", "network.proxy.http_port": port,
        "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": port,
        "network.proxy.allow_hijacking_localhost": False,
        "devtools.console.stdout.content": True,
        # Firefox's own services, which would ask the network (and be refused) meanwhile
        "app.normandy.enabled": False, "app.normandy.api_url": "",
        "toolkit.telemetry.unified": False, "toolkit.telemetry.server": "",
        "dom.push.connection.enabled": False, "dom.push.serverURL": "",
        "geo.provider.network.url": "", "browser.region.network.url": "",
        "browser.region.update.enabled": False, "services.settings.server": "data:,",
        "browser.newtabpage.enabled": False, "browser.topsites.contile.enabled": False,
        "browser.newtabpage.activity-stream.feeds.topsites": False,
        "browser.newtabpage.activity-stream.showSponsored": False,
        "browser.newtabpage.activity-stream.showSponsoredTopSites": False,
        "browser.discovery.enabled": False, "browser.ping-centre.telemetry": False,
        "media.gmp-provider.enabled": False, "media.gmp-widevinecdm.enabled": False,
        "media.gmp-gmpopenh264.enabled": False,
    }
    lines = [f"user_pref({json.dumps(k)}, {json.dumps(v)});" for k, v in prefs.items()]
    (directory / "user.js").write_text("\n".join(lines) + "\n")


def _with_report(page_path: str, report: str) -> str:
    return page_path + ("&" if "?" in page_path else "?") + f"report={report}"


def _run_firefox(page_path: str, name: str, timeout_s: float, extra: dict | None,
                 isolated: bool) -> dict:
    mailbox = Mailbox()
    server, base = serve(extra=extra, isolated=isolated, mailbox=mailbox)
    report = f"/report/{name}"
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="samebits-firefox-") as tmp:
        profile = Path(tmp) / "profile"
        profile.mkdir()
        _firefox_profile(profile, int(urlsplit(base).port))
        log = open(Path(tmp) / "console.txt", "w+")
        env = {**os.environ, "MOZ_HEADLESS": "1", "HOME": tmp, "MOZ_CRASHREPORTER_DISABLE": "1"}
        proc = subprocess.Popen([FIREFOX, "--headless", "--no-remote", "--profile", str(profile),
                                 f"{base}/web/{_with_report(page_path, report)}"],
                                stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            body = None
            while body is None:
                with mailbox.lock:
                    body = mailbox.reports.get(report)
                if body is not None:
                    break
                if proc.poll() is not None:
                    raise RuntimeError(f"Firefox exited ({proc.returncode}) before web/{page_path} "
                                       f"reported: {_tail(log)}")
                if time.monotonic() - start > timeout_s:
                    raise TimeoutError(f"web/{page_path} did not report within {timeout_s:.0f} s "
                                       f"in Firefox: {_tail(log)}")
                time.sleep(0.3)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            server.shutdown()
            server.server_close()
        result = json.loads(body)
        console = [line for line in _tail(log, 200).splitlines()
                   if "error" in line.lower() or "warn" in line.lower()]
        log.close()
    services = [url for url in mailbox.blocked if _browser_service(url)]
    result.update(engine="firefox", browser_version=_firefox_version(),
                  blocked=[url for url in mailbox.blocked if url not in services],
                  browser_services=services, console=console, wall_s=time.monotonic() - start)
    return result


def _browser_service(url: str) -> bool:
    """A request of Firefox itself (remote settings, telemetry, push, plugin
    updates), which
    some prefs cannot stop: refused like any other, listed apart from the
    page's own requests."""
    host = (urlsplit(url).hostname if "://" in url else url.rsplit(":", 1)[0]) or ""
    return host.endswith((".mozilla.com", ".mozilla.org", ".mozilla.net", ".mozaws.net")) or \
        host == "update.googleapis.com"   # the media plugins' (Widevine) updater


def _tail(log, lines: int = 8) -> str:
    log.flush()
    log.seek(0)
    return "\n".join(log.read().splitlines()[-lines:])


@contextlib.contextmanager
def _xvfb() -> Iterator[str]:
    """An Xvfb display of its own choosing (-displayfd); yields ':N'."""
    read, write = os.pipe()
    proc = subprocess.Popen([XVFB, "-displayfd", str(write), "-screen", "0", "1400x900x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait()


def webkit_driver(base: str, display: str, engine: str = "webkit"):
    """A selenium driver of MiniBrowser on `display`, every other host sent
    through the test server at `base` (which refuses it); JavaScriptCore's
    SharedArrayBuffer on for 'webkit-sab'."""
    from selenium import webdriver
    from selenium.webdriver.common.proxy import Proxy, ProxyType
    from selenium.webdriver.webkitgtk.options import Options
    from selenium.webdriver.webkitgtk.service import Service
    options = Options()
    options.binary_location = MINIBROWSER
    options.add_argument("--automation")
    hostport = base.removeprefix("http://")
    options.proxy = Proxy({"proxyType": ProxyType.MANUAL, "httpProxy": hostport,
                           "sslProxy": hostport})
    env = {**os.environ, "DISPLAY": display, **(JSC_SHARED if engine == "webkit-sab" else {})}
    return webdriver.WebKitGTK(service=Service(executable_path=WEBKIT_DRIVER, env=env),
                               options=options)


def _run_webkit(page_path: str, name: str, timeout_s: float, extra: dict | None,
                isolated: bool, engine: str = "webkit") -> dict:
    mailbox = Mailbox()
    server, base = serve(extra=extra, isolated=isolated, mailbox=mailbox)
    start = time.monotonic()
    try:
        with _xvfb() as display:
            driver = webkit_driver(base, display, engine)
            try:
                version = f"WebKitGTK {driver.capabilities.get('browserVersion', '?')}"
                driver.get(f"{base}/web/{page_path}")
                probe = f"return !!(window.{name} && window.{name}.done)"
                while not driver.execute_script(probe):
                    if time.monotonic() - start > timeout_s:
                        raise TimeoutError(f"web/{page_path} did not finish within "
                                           f"{timeout_s:.0f} s in WebKit")
                    time.sleep(0.3)
                result = driver.execute_script(f"return JSON.parse(JSON.stringify(window.{name}))")
            finally:
                driver.quit()
    finally:
        server.shutdown()
        server.server_close()
    result.update(engine=engine, browser_version=version, blocked=mailbox.blocked, console=[],
                  wall_s=time.monotonic() - start)
    return result


def run_until_done(engine: str, page_path: str, name: str, timeout_s: float = 900,
                   extra: dict[str, tuple[bytes, str]] | None = None,
                   isolated: bool = True) -> dict[str, Any]:
    """Opens web/<page_path> in the engine and returns window.<name> once its
    `done` is set (see the top for what is added)."""
    missing = missing_prerequisites(engine)
    if missing:
        raise RuntimeError(f"{engine} needs: " + "; ".join(missing))
    if engine == "chromium":
        import run_browser
        result = run_browser.run_until_done(page_path, name, timeout_s, extra, isolated)
        result.update(engine="chromium", browser_version=f"Chromium {result['browser_version']}")
        return result
    if engine == "firefox":
        return _run_firefox(page_path, name, timeout_s, extra, isolated)
    return _run_webkit(page_path, name, timeout_s, extra, isolated, engine)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.split("\n\n")[1])
    print(json.dumps(run_until_done(sys.argv[1], sys.argv[2], sys.argv[3]), indent=1)[:4000])
