"""The built HTML in a real browser (Debian's chromium driven by playwright; no browser download).

Run after `make book`. For every page: no console errors beyond the known harmless ones, math
rendered; on every chapter page at least one plotly figure drawn; every slider figure's slider
changes the plotted data. A screenshot of each page goes to _build/screenshots/.
"""
from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
# sphinx-thebe 0.3.1 declares THEBE_JS_URL twice on every Jupyter Book 1 page (harmless).
ALLOWED = (re.compile(r"Identifier 'THEBE_JS_URL' has already been declared"),)
EXTERNAL = re.compile(r"^https?://(?!127\.0\.0\.1|localhost)")

# The local HTTP server's worker threads close their sockets lazily; not a defect of the book.
pytestmark = [pytest.mark.book, pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


def _pages() -> list[str]:
    if not HTML.is_dir():
        return []
    skip = {"genindex.html", "search.html"}
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts and "_sources" not in p.parts
                  and "reports" not in p.parts)


def _is_chapter(page: str) -> bool:
    return re.search(r"part\d-[^/]+/\d\d-", page) is not None


@pytest.fixture(scope="module")
def server():
    if not (HTML / "index.html").exists():
        pytest.fail("no built book in _build/html: run `make book` first")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: apt-get install chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def test_book_has_pages():
    pages = _pages()
    assert "index.html" in pages or any(p.endswith("intro.html") for p in pages)
    assert any(_is_chapter(p) for p in pages), "no chapter page was built"


@pytest.mark.parametrize("page", _pages())
def test_page_in_browser(page, server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    # Offline: refuse anything outside the book at once, so a CDN request cannot hang the test.
    ctx.route(EXTERNAL, lambda route: route.abort())
    tab = ctx.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    tab.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    failed_local: list[str] = []
    tab.on("requestfailed", lambda req: None if EXTERNAL.match(req.url) else failed_local.append(req.url))
    tab.goto(f"{server}/{page}", wait_until="load")
    tab.wait_for_timeout(400)

    n_plots = tab.evaluate("document.querySelectorAll('.plotly-graph-div').length")
    drawn = tab.evaluate("Array.from(document.querySelectorAll('.plotly-graph-div'))"
                         ".filter(d => d.querySelector('.main-svg')).length")
    assert drawn == n_plots, f"{page}: {n_plots - drawn} of {n_plots} plotly figures not drawn"
    if _is_chapter(page):
        assert n_plots >= 1, f"{page}: a chapter page must show at least one plotly figure"
        assert tab.evaluate("typeof window.Plotly") == "object", "plotly.js not loaded from _static"

    # Math: MathJax typeset something wherever the page has math.
    if tab.evaluate("document.querySelectorAll('.math').length") > 0:
        tab.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=15000)

    # Every slider figure: run what the last slider step does, and the plotted data must change.
    n_sliders = tab.evaluate("Array.from(document.querySelectorAll('.plotly-graph-div'))"
                             ".filter(d => d.layout && d.layout.sliders && d.layout.sliders.length).length")
    for k in range(n_sliders):
        changed = tab.evaluate("""async (k) => {
            const gd = Array.from(document.querySelectorAll('.plotly-graph-div'))
                .filter(d => d.layout && d.layout.sliders && d.layout.sliders.length)[k];
            const snap = () => JSON.stringify(gd._fullData.map(t => [Array.from(t.x || []), Array.from(t.y || []), Array.from((t.z || []).flat ? (t.z || []).flat() : [])]));
            const steps = gd.layout.sliders[0].steps;
            const active = gd.layout.sliders[0].active || 0;
            const target = steps[active === steps.length - 1 ? 0 : steps.length - 1];
            const before = snap();
            await Plotly[target.method](gd, ...target.args);
            return before !== snap();
        }""", k)
        assert changed, f"{page}: slider figure {k} did not change its data when its slider moved"

    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / (page.replace("/", "__").removesuffix(".html") + ".png")), full_page=False)
    ctx.close()
    bad = [e for e in errors if not any(p.search(e) for p in ALLOWED)
           and not re.search(r"net::ERR_FAILED|ERR_BLOCKED|Failed to load resource", e)]
    assert not bad, f"{page}: console errors: {bad}"
    assert not failed_local, f"{page}: local resources failed to load: {failed_local}"
