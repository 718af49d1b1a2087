"""Screenshots and load metrics of built pages as a reader sees them: desktop and phone width,
light and dark mode.

    .venv/bin/python tools/shoot.py _build/html/book/part1-classical/01-bfgs-self-concordant.html
    .venv/bin/python tools/shoot.py PAGE.html --out /tmp/shots --full
    .venv/bin/python tools/shoot.py PAGE.html --metrics --json perf.json   # no screenshots

Serves the page's HTML root on localhost (offline: anything else is refused), waits for the
figures and math, reports console errors and horizontal overflow, and writes PNGs named after the
page, width and mode. With ``--metrics`` it loads each page cold (cache off) at both widths and
reports what the reader pays before the page settles: bytes transferred, requests, first
contentful paint and main-thread blocking (long tasks beyond 50 ms), the phone with its CPU
slowed ``--cpu`` times (4 by default, a mid-range phone); then the same once every figure is
drawn, as for a reader who scrolls through the whole page.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import sys
import threading
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}
OFFLINE = re.compile(r"^https?://(?!127\.0\.0\.1)")
# Registered before any page script runs, so that long tasks from the very start are counted.
LONGTASKS = """window.__longtasks = [];
try { new PerformanceObserver(l => window.__longtasks.push(...l.getEntries().map(e => e.duration)))
        .observe({type: 'longtask', buffered: true}); } catch (e) {}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def html_root(page: Path) -> Path:
    """The folder holding the page's _static (the root the page's links are relative to)."""
    for parent in [page.parent, *page.parents]:
        if (parent / "_static").is_dir():
            return parent
    raise SystemExit(f"no _static folder above {page}: is it a built page?")


def serve(root: Path) -> http.server.ThreadingHTTPServer:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def measure(browser, url: str, width: int, height: int, cpu: float = 1.0) -> dict:
    """One cold load: bytes and requests until the network is idle, first contentful paint (ms),
    total blocking time (sum of long tasks beyond 50 ms, ms)."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    ctx.route(OFFLINE, lambda r: r.abort())
    ctx.add_init_script(LONGTASKS)
    tab = ctx.new_page()
    cdp = ctx.new_cdp_session(tab)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    if cpu != 1.0:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
    got = {"bytes": 0, "requests": 0, "last": time.perf_counter()}

    def finished(ev):
        got["bytes"] += ev.get("encodedDataLength", 0)
        got["requests"] += 1
        got["last"] = time.perf_counter()

    cdp.on("Network.loadingFinished", finished)
    cdp.on("Network.requestWillBeSent", lambda ev: got.update(last=time.perf_counter()))
    t0 = time.perf_counter()
    tab.goto(url, wait_until="load", timeout=120_000)
    # Settled: no request for 1.5 s (playwright's networkidle can wait forever on a page that polls).
    while time.perf_counter() - got["last"] < 1.5 and time.perf_counter() - t0 < 60:
        tab.wait_for_timeout(250)
    out = tab.evaluate("""() => ({
        fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null,
        tbt: window.__longtasks.reduce((s, d) => s + Math.max(0, d - 50), 0),
        html: (performance.getEntriesByType('navigation')[0] || {}).encodedBodySize || null,
        figures: document.querySelectorAll('.plotly-graph-div').length,
        drawn: document.querySelectorAll('.plotly-graph-div .main-svg').length > 0
          ? Array.from(document.querySelectorAll('.plotly-graph-div')).filter(d => d.querySelector('.main-svg')).length : 0,
    })""")
    out.update(bytes=got["bytes"], requests=got["requests"], seconds=round(got["last"] - t0, 2))
    # Then every figure drawn, as for a reader who scrolls through the whole page.
    t1 = time.perf_counter()
    tab.evaluate("window.optbookFigures ? window.optbookFigures.drawAll().then(() => true) : true")
    while time.perf_counter() - got["last"] < 1.0 and time.perf_counter() - t1 < 60:
        tab.wait_for_timeout(250)
    out.update(tab.evaluate("""() => ({
        tbt_all: window.__longtasks.reduce((s, d) => s + Math.max(0, d - 50), 0),
        drawn: Array.from(document.querySelectorAll('.plotly-graph-div')).filter(d => d.querySelector('.main-svg')).length })"""),
        bytes_all=got["bytes"], requests_all=got["requests"])
    ctx.close()
    return out


def shoot(browser, url: str, stem: str, out: Path, full: bool, figures: bool = False,
          at: list[str] = (), only: str | None = None) -> int:
    status = 0
    for size, (w, h) in SIZES.items():
        if only and size != only:
            continue
        for mode in ("light", "dark"):
            ctx = browser.new_context(viewport={"width": w, "height": h}, color_scheme=mode)
            ctx.add_init_script(f"localStorage.setItem('theme', '{mode}'); localStorage.setItem('mode', '{mode}');")
            ctx.route(OFFLINE, lambda r: r.abort())
            tab = ctx.new_page()
            errors: list[str] = []
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(url, wait_until="load")
            # Figures are drawn as they come near the screen: draw them all for a full-page shot.
            if full or figures:
                tab.evaluate("window.optbookFigures && window.optbookFigures.drawAll()")
            tab.wait_for_timeout(1500)
            name = f"{stem}-{size}-{mode}.png"
            tab.screenshot(path=str(out / name), full_page=full)
            for k, text in enumerate(at):
                found = tab.evaluate("""(t) => { const h = Array.from(document.querySelectorAll('h1,h2,h3,p,table'))
                    .find(e => e.textContent.includes(t)); if (h) { h.scrollIntoView(); return true; } return false; }""", text)
                if found:
                    tab.wait_for_timeout(300)
                    tab.screenshot(path=str(out / f"{stem}-{size}-{mode}-at{k}.png"))
            if figures:  # each figure (with its caption and slider) on its own
                boxes = tab.locator("figure.optbook-figure, .plotly-graph-div:not(figure .plotly-graph-div)")
                for k in range(boxes.count()):
                    box = boxes.nth(k)
                    box.scroll_into_view_if_needed()
                    tab.wait_for_timeout(1200)
                    box.screenshot(path=str(out / f"{stem}-fig{k + 1}-{size}-{mode}.png"))
            overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            figs = tab.evaluate("document.querySelectorAll('.plotly-graph-div').length")
            print(f"{name}: {figs} figures, horizontal overflow {overflow}px, "
                  f"{len(errors)} console errors{': ' + '; '.join(errors[:3]) if errors else ''}")
            status |= bool(errors)
            ctx.close()
    return status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("_build/shots"))
    ap.add_argument("--full", action="store_true", help="whole page, not just the first screen")
    ap.add_argument("--at", action="append", default=[], metavar="TEXT",
                    help="also a screenshot scrolled to the first heading or paragraph containing TEXT (repeatable)")
    ap.add_argument("--only", choices=sorted(SIZES), help="one width only")
    ap.add_argument("--figures", action="store_true", help="also one screenshot per figure")
    ap.add_argument("--metrics", action="store_true", help="load metrics instead of screenshots")
    ap.add_argument("--cpu", type=float, default=4.0, help="CPU slow-down for the phone metrics")
    ap.add_argument("--json", type=Path, help="append the metrics to this JSON file")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    status, rows = 0, []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for page in args.pages:
            page = page.resolve()
            root = html_root(page)
            httpd = serve(root)
            url = f"http://127.0.0.1:{httpd.server_address[1]}/{page.relative_to(root)}"
            if args.metrics:
                for size, (w, h) in SIZES.items():
                    m = measure(browser, url, w, h, cpu=args.cpu if size == "phone" else 1.0)
                    m.update(page=page.name, size=size)
                    rows.append(m)
                    print(f"{page.name} {size}: {m['bytes'] / 1e6:.2f} MB in {m['requests']} requests, "
                          f"HTML {(m['html'] or 0) / 1e6:.2f} MB, first paint {m['fcp'] or 0:.0f} ms, "
                          f"blocking {m['tbt']:.0f} ms; every figure drawn ({m['drawn']}/{m['figures']}): "
                          f"{m['bytes_all'] / 1e6:.2f} MB in {m['requests_all']} requests, blocking {m['tbt_all']:.0f} ms")
            else:
                status |= shoot(browser, url, page.stem, args.out, args.full, args.figures, args.at, args.only)
            httpd.shutdown()
        browser.close()
    if args.json:
        old = json.loads(args.json.read_text()) if args.json.exists() else []
        args.json.write_text(json.dumps(old + rows, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
