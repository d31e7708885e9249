"""A page in Firefox or WebKit that a test drives as a person would: type
into fields, pick options, click buttons, choose files, read what the page
shows, take a screenshot. The Chromium tests do the same through Playwright
(run_browser.py); this file gives the other two engines the same few verbs.

- **firefox**: Debian's firefox-esr over WebDriver BiDi, which Firefox
  speaks itself (--remote-debugging-port; no geckodriver, which Debian does
  not package), through websocket-client (a dependency of selenium).
- **webkit**: WebKitGTK's MiniBrowser through WebKitWebDriver and selenium,
  under Xvfb.

Both use the profile and proxy of engines.py: only 127.0.0.1 is reachable,
and what else the page asks for is refused and listed (mailbox.blocked).

    with open_page("firefox", viewport=(1100, 1400)) as (page, base, mailbox):
        page.goto(f"{base}/web/home.html")
        page.fill("#m", "48"); page.click("#run"); page.wait_for("window.homeState.runs > 0")
"""
from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import engines
from serve import Mailbox, serve

# WebDriver's key codes (the same in BiDi and in classic WebDriver)
CONTROL, BACKSPACE = "\ue009", "\ue003"


class FirefoxPage:
    """One tab of a headless Firefox, driven over WebDriver BiDi."""

    def __init__(self, url: str) -> None:
        import websocket
        self._ws = websocket.create_connection(url + "/session", suppress_origin=True,
                                               timeout=600)
        self._id = 0
        caps = self._call("session.new", {"capabilities": {}})["capabilities"]
        self.version = f"Firefox {caps.get('browserVersion', '?')}"
        self._context = self._call("browsingContext.getTree", {})["contexts"][0]["context"]

    def _call(self, method: str, params: dict) -> dict:
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") != self._id:
                continue   # an event
            if message.get("type") == "error":
                raise RuntimeError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def _script(self, expression: str, ownership: str = "none") -> dict:
        out = self._call("script.evaluate", {"expression": expression, "awaitPromise": True,
                                             "target": {"context": self._context},
                                             "resultOwnership": ownership})
        if out.get("type") == "exception":
            raise RuntimeError(f"page script failed: {out['exceptionDetails'].get('text')}")
        return out["result"]

    def _element(self, selector: str) -> dict:
        node = self._script(f"document.querySelector({json.dumps(selector)})", "root")
        if node.get("type") != "node":
            raise LookupError(f"no element {selector!r} on the page")
        return {"sharedId": node["sharedId"]}

    def goto(self, url: str) -> None:
        self._call("browsingContext.navigate", {"context": self._context, "url": url,
                                                "wait": "complete"})

    def evaluate(self, expression: str) -> Any:
        text = self._script(f"JSON.stringify(({expression}) ?? null)")["value"]
        return json.loads(text)

    def click(self, selector: str) -> None:
        element = self._element(selector)
        self._script(f"document.querySelector({json.dumps(selector)}).scrollIntoView()")
        self._call("input.performActions", {"context": self._context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": 0, "y": 0,
                         "origin": {"type": "element", "element": element}},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def fill(self, selector: str, text: str) -> None:
        """Click into the field, select all, delete, type `text` key by key."""
        self.click(selector)
        keys = [{"type": "keyDown", "value": CONTROL}, {"type": "keyDown", "value": "a"},
                {"type": "keyUp", "value": "a"}, {"type": "keyUp", "value": CONTROL},
                {"type": "keyDown", "value": BACKSPACE}, {"type": "keyUp", "value": BACKSPACE}]
        for ch in text:
            keys += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
        self._call("input.performActions", {"context": self._context, "actions": [
            {"type": "key", "id": "keyboard", "actions": keys}]})

    def select_option(self, selector: str, value: str) -> None:
        """As Playwright's select_option: set the option, fire input and change."""
        self._script(f"(() => {{ const s = document.querySelector({json.dumps(selector)});"
                     f" s.value = {json.dumps(value)};"
                     " s.dispatchEvent(new Event('input', {bubbles: true}));"
                     " s.dispatchEvent(new Event('change', {bubbles: true})); })()")

    def set_input_files(self, selector: str, path: str) -> None:
        self._call("input.setFiles", {"context": self._context, "element": self._element(selector),
                                      "files": [str(path)]})

    def inner_text(self, selector: str) -> str:
        return self.evaluate(f"document.querySelector({json.dumps(selector)}).innerText")

    def input_value(self, selector: str) -> str:
        return self.evaluate(f"document.querySelector({json.dumps(selector)}).value")

    def screenshot(self, path: Path) -> None:
        data = self._call("browsingContext.captureScreenshot",
                          {"context": self._context, "origin": "document"})["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def wait_for(self, expression: str, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(f"!!({expression})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression} was not true within {timeout_s:.0f} s")
            time.sleep(0.2)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call("session.end", {})
        self._ws.close()


class WebKitPage:
    """MiniBrowser's page, driven over classic WebDriver (selenium)."""

    def __init__(self, driver) -> None:
        self._driver = driver
        self.version = f"WebKitGTK {driver.capabilities.get('browserVersion', '?')}"

    def _element(self, selector: str):
        from selenium.webdriver.common.by import By
        return self._driver.find_element(By.CSS_SELECTOR, selector)

    def goto(self, url: str) -> None:
        self._driver.get(url)

    def evaluate(self, expression: str) -> Any:
        return json.loads(self._driver.execute_script(
            f"return JSON.stringify(({expression}) ?? null)"))

    def click(self, selector: str) -> None:
        self._element(selector).click()

    def fill(self, selector: str, text: str) -> None:
        from selenium.webdriver.common.keys import Keys
        element = self._element(selector)
        element.click()
        element.send_keys(Keys.CONTROL, "a")
        element.send_keys(Keys.BACK_SPACE)
        if text:
            element.send_keys(text)

    def select_option(self, selector: str, value: str) -> None:
        from selenium.webdriver.support.select import Select
        Select(self._element(selector)).select_by_value(value)

    def set_input_files(self, selector: str, path: str) -> None:
        self._element(selector).send_keys(str(path))

    def inner_text(self, selector: str) -> str:
        return self._element(selector).text

    def input_value(self, selector: str) -> str:
        return self._element(selector).get_attribute("value") or ""

    def screenshot(self, path: Path) -> None:
        self._driver.save_screenshot(str(path))

    def wait_for(self, expression: str, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while not self._driver.execute_script(f"return !!({expression})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression} was not true within {timeout_s:.0f} s")
            time.sleep(0.2)

    def close(self) -> None:
        self._driver.quit()


@contextlib.contextmanager
def _firefox(base: str, viewport: tuple[int, int]) -> Iterator[FirefoxPage]:
    with tempfile.TemporaryDirectory(prefix="samebits-firefox-") as tmp:
        profile = Path(tmp) / "profile"
        profile.mkdir()
        engines._firefox_profile(profile, int(urlsplit(base).port))
        with open(profile / "user.js", "a") as f:
            f.write('user_pref("remote.active-protocols", 1);\n')   # BiDi only
        env = {**os.environ, "MOZ_HEADLESS": "1", "HOME": tmp, "MOZ_CRASHREPORTER_DISABLE": "1",
               "MOZ_HEADLESS_WIDTH": str(viewport[0]), "MOZ_HEADLESS_HEIGHT": str(viewport[1])}
        proc = subprocess.Popen([engines.FIREFOX, "--headless", "--no-remote", "--profile",
                                 str(profile), "--remote-debugging-port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env, start_new_session=True)
        found: list[str] = []
        ready = threading.Event()

        def drain() -> None:   # Firefox's output, read to the end so that it never blocks
            for line in proc.stdout:
                m = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
                if m and not found:
                    found.append(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        page = None
        try:
            if not ready.wait(60) or not found:
                raise RuntimeError("Firefox did not open its WebDriver BiDi port")
            page = FirefoxPage(found[0])
            yield page
        finally:
            if page is not None:
                page.close()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def _webkit(base: str, viewport: tuple[int, int], engine: str = "webkit") -> Iterator[WebKitPage]:
    with engines._xvfb() as display:
        page = WebKitPage(engines.webkit_driver(base, display, engine))
        try:
            page._driver.set_window_size(*viewport)
            yield page
        finally:
            page.close()


@contextlib.contextmanager
def open_page(engine: str, extra: dict | None = None, isolated: bool = True,
              viewport: tuple[int, int] = (1100, 1400)) -> Iterator[tuple[Any, str, Mailbox]]:
    """(page, the server's base URL, its mailbox) for a fresh browser of the
    engine and a 127.0.0.1 server (web/serve.py); both stop on exit."""
    missing = engines.missing_prerequisites(engine)
    if missing:
        raise RuntimeError(f"{engine} needs: " + "; ".join(missing))
    mailbox = Mailbox()
    server, base = serve(extra=extra, isolated=isolated, mailbox=mailbox)
    try:
        opened = _firefox(base, viewport) if engine == "firefox" else _webkit(base, viewport, engine)
        with opened as page:
            yield page, base, mailbox
    finally:
        server.shutdown()
        server.server_close()
