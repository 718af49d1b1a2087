"""Screenshots of built pages as a reader sees them: desktop and phone width, light and dark mode.

    .venv/bin/python tools/shoot.py _build/html/book/part1-classical/01-bfgs-self-concordant.html
    .venv/bin/python tools/shoot.py PAGE.html --out /tmp/shots --full

Serves the page's HTML root on localhost (offline: anything else is refused), waits for the
figures and math, reports console errors, and writes PNGs named after the page, width and mode.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import re
import sys
import threading
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def html_root(page: Path) -> Path:
    """The folder holding the page's _static (the root the page's links are relative to)."""
    for parent in [page.parent, *page.parents]:
        if (parent / "_static").is_dir():
            return parent
    raise SystemExit(f"no _static folder above {page}: is it a built page?")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("_build/shots"))
    ap.add_argument("--full", action="store_true", help="whole page, not just the first screen")
    ap.add_argument("--at", action="append", default=[], metavar="TEXT",
                    help="also a screenshot scrolled to the first heading or paragraph containing TEXT (repeatable)")
    ap.add_argument("--only", choices=sorted(SIZES), help="one width only")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    status = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for page in args.pages:
            page = page.resolve()
            root = html_root(page)
            handler = functools.partial(_Quiet, directory=str(root))
            httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            url = f"http://127.0.0.1:{httpd.server_address[1]}/{page.relative_to(root)}"
            for size, (w, h) in SIZES.items():
                if args.only and size != args.only:
                    continue
                for mode in ("light", "dark"):
                    ctx = browser.new_context(viewport={"width": w, "height": h}, color_scheme=mode)
                    ctx.add_init_script(f"localStorage.setItem('theme', '{mode}'); localStorage.setItem('mode', '{mode}');")
                    ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda r: r.abort())
                    tab = ctx.new_page()
                    errors: list[str] = []
                    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                    tab.on("pageerror", lambda e: errors.append(str(e)))
                    tab.goto(url, wait_until="load")
                    tab.wait_for_timeout(1200)
                    name = f"{page.stem}-{size}-{mode}.png"
                    tab.screenshot(path=str(args.out / name), full_page=args.full)
                    for k, text in enumerate(args.at):
                        found = tab.evaluate("""(t) => { const h = Array.from(document.querySelectorAll('h1,h2,h3,p,table'))
                            .find(e => e.textContent.includes(t)); if (h) { h.scrollIntoView(); return true; } return false; }""", text)
                        if found:
                            tab.wait_for_timeout(300)
                            tab.screenshot(path=str(args.out / f"{page.stem}-{size}-{mode}-at{k}.png"))
                    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                    figs = tab.evaluate("document.querySelectorAll('.plotly-graph-div').length")
                    print(f"{name}: {figs} figures, horizontal overflow {overflow}px, "
                          f"{len(errors)} console errors{': ' + '; '.join(errors[:3]) if errors else ''}")
                    status |= bool(errors)
                    ctx.close()
            httpd.shutdown()
        browser.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
