#!/usr/bin/env python3
"""Drives the HTTP statistics page of a running sluice in headless Chromium
through ChromeDriver's WebDriver protocol (plain HTTP and JSON: the
standard library is enough), as an operator would use it:

  1. loads the page and checks that every proxy and server is on it;
  2. ticks a server's checkbox, chooses "Set state to MAINT" and clicks
     Apply, as a browser posts the form;
  3. checks that the page came back with the result and that the server
     is in maintenance (the page's CSV export says so);
  4. saves a screenshot (PNG) of the page.

Usage: webdriver.py <chromedriver url> <stats page url> <screenshot.png>
Exit status 0 when every check passed; each failure is printed.
"""
import base64
import json
import os
import sys
import tempfile
import urllib.request

WD, PAGE, SHOT = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(WD + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())["value"]


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def css(sid, selector, root=None):
    path = "/session/%s/element/%s/elements" % (sid, root) if root else \
           "/session/%s/elements" % sid
    return [list(e.values())[0] for e in
            call("POST", path, {"using": "css selector", "value": selector})]


def text(sid, el):
    return call("GET", "/session/%s/element/%s/text" % (sid, el))


profile = tempfile.mkdtemp(prefix="sluice-e2e-")
caps = {"capabilities": {"alwaysMatch": {
    "browserName": "chrome",
    "goog:chromeOptions": {
        "binary": os.environ.get("CHROMIUM", "/usr/bin/chromium"),
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--window-size=1600,1000", "--user-data-dir=" + profile],
    }}}}
sid = call("POST", "/session", caps)["sessionId"]
try:
    call("POST", "/session/%s/url" % sid, {"url": PAGE})
    title = call("GET", "/session/%s/title" % sid)
    check(title.startswith("Statistics Report for sluice"), "page title: %r" % title)
    captions = [text(sid, e) for e in css(sid, "table.px caption")]
    for px in ("fe", "app", "other"):
        check(any(c.split()[0] == px for c in captions if c), "proxy %s on the page" % px)
    names = " ".join(text(sid, e) for e in css(sid, "td.name"))
    for srv in ("web1", "web2", "alone"):
        check(srv in names, "server %s on the page" % srv)

    # the form of backend "app": tick web2, choose MAINT, Apply
    boxes = css(sid, "input[type=checkbox][name=s][value=web2]")
    check(len(boxes) == 1, "one checkbox for web2")
    call("POST", "/session/%s/element/%s/click" % (sid, boxes[0]), {})
    forms = [f for f in css(sid, "form")
             if css(sid, "input[type=checkbox][value=web2]", f)]
    check(len(forms) == 1, "the form holding web2")
    opt = css(sid, "select[name=action] option[value=maint]", forms[0])
    check(len(opt) == 1, "the MAINT action in that form")
    call("POST", "/session/%s/element/%s/click" % (sid, opt[0]), {})
    submit = css(sid, "input[type=submit]", forms[0])
    call("POST", "/session/%s/element/%s/click" % (sid, submit[0]), {})
    url = call("GET", "/session/%s/url" % sid)
    check(url.endswith(";st=DONE"), "redirected with the result: %s" % url)
    body = call("GET", "/session/%s/source" % sid)
    check("applied to every selected server" in body, "the page tells the action was done")

    # what the page's CSV export says now
    with urllib.request.urlopen(PAGE.split(";")[0] + ";csv", timeout=10) as r:
        csv = r.read().decode()
    rows = {l.split(",")[1]: l.split(",") for l in csv.splitlines()
            if l.startswith("app,")}
    check(rows.get("web2", [""] * 18)[17] == "MAINT", "web2 is in maintenance")
    check(rows.get("web1", [""] * 18)[17].startswith("UP"), "web1 is still up")

    png = base64.b64decode(call("GET", "/session/%s/screenshot" % sid))
    with open(SHOT, "wb") as f:
        f.write(png)
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000,
          "screenshot %s (%d bytes)" % (SHOT, len(png)))
finally:
    call("DELETE", "/session/%s" % sid)
sys.exit(1 if failures else 0)
