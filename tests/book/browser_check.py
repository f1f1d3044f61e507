#!/usr/bin/python3
"""Opens every page of the built book in headless Chromium and fails on a
broken link, a missing image (or stylesheet or script), a JavaScript error or
a page with no content.

    browser_check.py HTML_DIR        check the book (e.g. build/book/html)
    browser_check.py --self-test     check a scratch site with one planted
                                     defect of each kind: all must be found

Chromium is driven through the DevTools protocol over a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes on file
descriptors 3 and 4), so no library beyond Python's is needed. Exits 77 (the
ctest SKIP code) when Chromium is not installed: a check that did not run
never reports success.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

from lib import process  # tools/lib, through PYTHONPATH=tools (ctest sets it)

SKIP = 77
MIN_TEXT = 40  # characters of text in the page's main part: less is "empty"
PAGE_TIMEOUT = 20.0

# Runs in each page after it has loaded: what the checks need to know.
PROBE = r"""
(() => {
  const main = document.querySelector('div.body, [role=main], main') || document.body;
  const images = Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
      ok: i.complete && i.naturalWidth > 0}));
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
  const ids = Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name);
  return JSON.stringify({text: (main.innerText || '').trim().length, images, links, ids});
})()
"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """A headless Chromium and one page target, over --remote-debugging-pipe."""

    def __init__(self, binary, profile):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4. A pipe
        # end may already be 3 or 4, where dup2 would not clear close-on-exec.
        os.set_inheritable(to_browser_r, True)
        os.set_inheritable(from_browser_w, True)

        def fds():
            if from_browser_w == 3:  # Do not overwrite it with the first dup2.
                moved = os.dup(from_browser_w)
            else:
                moved = from_browser_w
            os.dup2(to_browser_r, 3)
            os.dup2(moved, 4)
        # Chromium and its helpers run in a group of their own: close() ends them all.
        self.child = process.Group(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--allow-file-access-from-files",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            # The dup2 to 3 and 4 happens in the child after Python's fd
            # closing would run, so keep the descriptors open.
            preexec_fn=fds, close_fds=False, stdin=None,
            stdout=subprocess.DEVNULL,
            # TOLL_BROWSER_LOG=1 shows Chromium's own messages.
            stderr=None if os.environ.get("TOLL_BROWSER_LOG") else subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer")
            for _, chunk in process.read_ready([self._from_browser], 0.5):
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=PAGE_TIMEOUT):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=PAGE_TIMEOUT):
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                del self.events[i]
                return e
        while True:
            e = self._read_message(deadline)
            if e.get("method") == method:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        self.child.wait(timeout=5)
        self.child.kill()  # also any helper Chromium left behind
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)


def page_problems(browser, path):
    """Loads one page; returns (problems, links, ids)."""
    url = "file://" + urllib.parse.quote(path)
    browser.events = []
    browser.call("Page.navigate", {"url": url}, session=True)
    browser.wait_for("Page.loadEventFired")
    probe = json.loads(browser.call("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                                    session=True)["result"]["value"])
    problems = []
    for e in browser.events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            problems.append(f"JavaScript error: {text}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            problems.append(f"console error: {params['entry'].get('text')} "
                            f"({params['entry'].get('url', '')})")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"failed to load a resource: {params.get('errorText')}")
    for image in probe["images"]:
        if not image["ok"]:
            problems.append(f"missing image: {image['src']}")
    if probe["text"] < MIN_TEXT:
        problems.append(f"no content: {probe['text']} characters of text")
    return problems, probe["links"], set(probe["ids"])


def check_site(html_dir, chromium):
    html_dir = os.path.abspath(html_dir)
    pages = sorted(os.path.join(folder, name) for folder, _, files in os.walk(html_dir)
                   for name in files if name.endswith(".html"))
    if not pages:
        return [f"{html_dir}: no HTML pages (build the book first)"], 0
    problems, links, ids = [], {}, {}
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(chromium, profile)
        try:
            for page in pages:
                found, links[page], ids[page] = page_problems(browser, page)
                problems += [f"{os.path.relpath(page, html_dir)}: {p}" for p in found]
        finally:
            browser.close()
    for page, hrefs in links.items():
        for href in hrefs:
            parsed = urllib.parse.urlparse(href)
            if parsed.scheme != "file":
                continue  # http(s) links leave the book; they are not checked offline
            target = urllib.parse.unquote(parsed.path)
            where = os.path.relpath(page, html_dir)
            if not os.path.exists(target):
                problems.append(f"{where}: broken link to {href}")
            elif parsed.fragment and target in ids and parsed.fragment not in ids[target]:
                problems.append(f"{where}: link to a missing anchor {href}")
    return problems, len(pages)


def self_test(chromium):
    """Plants one defect of each kind in a scratch site; all must be found."""
    with tempfile.TemporaryDirectory() as site:
        good = "<p>" + "A page with enough words to count as content. " * 3 + "</p>"
        files = {
            "index.html": f"<html><body><div class=body>{good}"
                          "<a href='missing.html'>a broken link</a>"
                          "<a href='other.html#nowhere'>a missing anchor</a></div></body></html>",
            "other.html": f"<html><body><div class=body>{good}<img src='nothere.svg' alt='x'>"
                          "</div></body></html>",
            "script.html": f"<html><body><div class=body>{good}</div>"
                           "<script>undefinedFunction();</script></body></html>",
            "empty.html": "<html><body><div class=body></div></body></html>",
        }
        for name, text in files.items():
            with open(os.path.join(site, name), "w") as f:
                f.write(text)
        problems, _ = check_site(site, chromium)
    expected = ["index.html: broken link", "index.html: link to a missing anchor",
                "other.html: missing image", "script.html: JavaScript error",
                "empty.html: no content"]
    missed = [e for e in expected if not any(p.startswith(e) for p in problems)]
    for p in problems:
        print("found:", p)
    if missed:
        print("browser_check: FAIL: the planted defects not found: " + "; ".join(missed))
        return 1
    print(f"browser_check: all {len(expected)} planted defects found")
    return 0


def main(argv):
    chromium = find_chromium()
    if not chromium:
        print("browser_check: SKIP: Chromium is not installed (Debian package chromium; "
              "tools/deps installs it)")
        return SKIP
    if argv == ["--self-test"]:
        return self_test(chromium)
    if len(argv) != 1:
        print(__doc__)
        return 2
    start = time.monotonic()
    problems, count = check_site(argv[0], chromium)
    for p in problems:
        print(p)
    seconds = time.monotonic() - start
    if problems:
        print(f"browser_check: FAIL: {len(problems)} problem(s) in {count} page(s) [{seconds:.1f} s]")
        return 1
    print(f"browser_check: {count} page(s) opened in Chromium: no broken link, missing image, "
          f"JavaScript error or empty page [{seconds:.1f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
