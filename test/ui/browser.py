"""Headless Chromium for the UI tests: --dump-dom for reading pages, and a tiny DevTools
protocol client (python3-websocket) for clicks, hovers, dialogs and screenshots."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
]


def import_websocket():
    """websocket-client from Debian's python3-websocket, also when the interpreter running the
    tests is not Debian's own (e.g. a pyenv python3 first on PATH)."""
    try:
        import websocket
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")
        import websocket
    return websocket


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("chromium is not installed (Debian package 'chromium', see scripts/setup.sh)")


def dump_dom(url, timeout=90):
    """The DOM after load, as HTML text."""
    with tempfile.TemporaryDirectory(prefix="celos-ui-chromium-") as profile:
        out = subprocess.run(
            [chromium_binary(), *CHROMIUM_FLAGS, "--user-data-dir=" + profile, "--dump-dom", url],
            capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError("chromium --dump-dom failed: " + out.stderr[-2000:])
    return out.stdout


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, width=1600, height=1000):
        websocket = import_websocket()
        self.profile = tempfile.mkdtemp(prefix="celos-ui-chromium-")
        self.process = subprocess.Popen(
            [chromium_binary(), *CHROMIUM_FLAGS, "--user-data-dir=" + self.profile,
             "--remote-debugging-port=0", "--remote-allow-origins=*", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._devtools_port()
        targets = self._poll(lambda: [t for t in json.load(
            urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5))
            if t.get("type") == "page"], "a page target")
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.dialogs = []
        self.accept_dialogs = True
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _poll(self, fn, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = fn()
                if value:
                    return value
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError("chromium exited with %s" % self.process.returncode)
            time.sleep(0.1)
        raise RuntimeError("timed out waiting for " + what)

    def _devtools_port(self):
        path = os.path.join(self.profile, "DevToolsActivePort")

        def read():
            with open(path) as f:
                line = f.readline().strip()
            return int(line) if line else None
        return self._poll(read, "DevToolsActivePort")

    def _handle(self, message):
        if message.get("method") == "Page.javascriptDialogOpening":
            # A confirm() blocks the page (and pending Input calls) until answered.
            self.dialogs.append(message["params"].get("message", ""))
            self.next_id += 1
            self.ws.send(json.dumps({"id": self.next_id, "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": self.accept_dialogs}}))
        self.events.append(message)

    def call(self, method, **params):
        self.next_id += 1
        call_id = self.next_id
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if "method" in message:
                self._handle(message)

    def navigate(self, url, timeout=30):
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise RuntimeError("page did not load: " + url)
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self._handle(json.loads(self.ws.recv()))
        self.ws.settimeout(30)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError("script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError("timed out waiting for: " + expression)

    def center_of(self, selector):
        box = self.evaluate(
            "(function(){var e=document.querySelector(%s); if(!e) return null;"
            " e.scrollIntoView({block:'center', inline:'center'});"
            " var r=e.getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2];})()"
            % json.dumps(selector))
        if box is None:
            raise AssertionError("no element matches " + selector)
        return box

    def click(self, selector, shift=False, ctrl=False):
        x, y = self.center_of(selector)
        modifiers = (8 if shift else 0) | (2 if ctrl else 0)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y, modifiers=modifiers)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1, modifiers=modifiers)

    def hover(self, selector):
        x, y = self.center_of(selector)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data["data"]))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
