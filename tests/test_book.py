"""The built HTML in a real browser, as readers meet it (Debian's chromium driven by playwright; no
browser download). Run after `make book`.

Every page is opened twice, cold (no cache):
- on a desktop (1280 px, light): no console error at all; bytes transferred, requests and first
  contentful paint measured (reported in _build/page-metrics.md, with budgets asserted with a
  wide margin); the HTML under 2 MB; plotly.js loaded only where the page has figures; every
  figure drawn, captioned and described (a text alternative), its toolbar without the cloud,
  lasso and box-select buttons; every slider moved from the keyboard changes its figure; math
  typeset;
- on a phone (390 px, dark mode): no console error, no horizontal overflow, nothing cut off at the
  column's edge (code, long formulas and tables scroll in their own box), every figure drawn on
  a transparent background; a screenshot of the first screen and of the first figure of every
  chapter goes to _build/screenshots/.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# OPTBOOK_HTML: another built tree, e.g. one chapter's from `make page` (_build/_page/<...>/html).
HTML = Path(os.environ.get("OPTBOOK_HTML") or ROOT / "_build" / "html").resolve()
SHOTS = ROOT / "_build" / "screenshots"
METRICS = ROOT / "_build" / "page-metrics.md"
CHROMIUM = os.environ.get("OPTBOOK_CHROMIUM") or "/usr/bin/chromium"  # tools/need-chromium.sh
EXTERNAL = re.compile(r"^https?://(?!127\.0\.0\.1|localhost)")
PAGE_HTML_BUDGET = 2_000_000          # bytes of HTML per page (the limit)
TRANSFER_BUDGET = 8_000_000           # bytes on a cold desktop load; pages now weigh 1-4.5 MB
FIRST_PAINT_BUDGET_MS = 10_000        # a wide margin for a loaded 2-core machine
# Counted before any page script runs: long tasks (main-thread blocking) from the very start.
LONGTASKS = """window.__longtasks = [];
try { new PerformanceObserver(l => window.__longtasks.push(...l.getEntries().map(e => e.duration)))
        .observe({type: 'longtask', buffered: true}); } catch (e) {}"""
# What sticks out of the text column and is cut off: an element of the article whose right edge
# passes the article's (not inside a box that scrolls: code blocks, tables, long formulas on a
# phone), or whose content is wider than a box that hides the rest (by more than a glyph's
# overhang). Figures are checked apart; screen-reader-only text is clipped on purpose.
BEYOND_COLUMN = """() => {
    const art = document.querySelector('.bd-article');
    if (!art) return [];
    const edge = art.getBoundingClientRect().right + 1, out = [];
    const scrolls = el => { for (let p = el.parentElement; p && p !== art; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
    for (const el of art.querySelectorAll('*')) {
        if (el.closest('.optbook-plot, .optbook-sr-only, mjx-assistive-mml, .sd-tab-set') || !el.getClientRects().length) continue;
        const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
        if (r.width === 0 || cs.visibility === 'hidden') continue;
        const name = el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className.split(' ')[0] : '');
        const text = (el.textContent || '').trim().slice(0, 50);
        if (r.right > edge && !scrolls(el)) out.push(`${name} ends ${Math.round(r.right - edge)}px past the column: ${text}`);
        else if (['hidden', 'clip'].includes(cs.overflowX) && el.scrollWidth > el.clientWidth + 8 && el.clientWidth > 2
                 && !el.tagName.startsWith('MJX-'))
            out.push(`${name} hides ${el.scrollWidth - el.clientWidth}px of its content: ${text}`);
        if (out.length >= 5) break;
    }
    return out;
}"""
SNAPSHOT = """gd => JSON.stringify([
    gd._fullData.map(t => ['x', 'y', 'z'].map(k => t[k] == null ? null
        : Array.from(t[k], v => (v != null && typeof v === 'object') ? Array.from(v) : v))),
    gd.layout.shapes || [], gd.layout.annotations || []])"""

# The local HTTP server's worker threads close their sockets lazily; not a defect of the book.
pytestmark = [pytest.mark.book, pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]
_rows: list[dict] = []


def _pages() -> list[str]:
    if not HTML.is_dir():
        return []
    skip = {"genindex.html", "search.html"}
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts and "_sources" not in p.parts
                  and "reports" not in p.parts and p.stat().st_size > 1000)  # not the redirect stubs


def _is_chapter(page: str) -> bool:
    return re.search(r"(^|/)\d\d-[^/]+\.html$", page) is not None


@pytest.fixture(scope="module")
def server():
    if not any(HTML.glob("*.html")):
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
        pytest.fail(f"{CHROMIUM} missing: install it with: apt-get install -y chromium (as root)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()
    _write_metrics()


def _write_metrics() -> None:
    if not _rows:
        return
    lines = ["| page | HTML (KB) | transferred (MB) | requests | first paint (ms) | blocking (ms) | figures |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(_rows, key=lambda r: r["page"]):
        lines.append(f"| {r['page']} | {r['html'] / 1e3:.0f} | {r['bytes'] / 1e6:.2f} | {r['requests']} | "
                     f"{r['fcp']:.0f} | {r['tbt']:.0f} | {r['figures']} |")
    METRICS.parent.mkdir(parents=True, exist_ok=True)
    METRICS.write_text("\n".join(lines) + "\n")
    (METRICS.with_suffix(".json")).write_text(json.dumps(_rows, indent=1))


def _open(browser, server, page, *, width, height, mode="light"):
    """A fresh context, offline, cache off, console errors collected; returns (ctx, tab, log)."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=mode)
    ctx.add_init_script(f"localStorage.setItem('theme', '{mode}'); localStorage.setItem('mode', '{mode}');")
    ctx.add_init_script(LONGTASKS)
    # Offline: refuse anything outside the book at once, so a CDN request cannot hang the test.
    ctx.route(EXTERNAL, lambda route: route.abort())
    tab = ctx.new_page()
    log = {"errors": [], "failed": [], "urls": {}, "bytes": 0, "requests": 0, "last": time.perf_counter()}
    tab.on("pageerror", lambda exc: log["errors"].append(f"pageerror: {exc}"))
    tab.on("console", lambda msg: log["errors"].append(f"console: {msg.text}") if msg.type == "error" else None)
    tab.on("requestfailed", lambda req: None if EXTERNAL.match(req.url) else log["failed"].append(req.url))
    cdp = ctx.new_cdp_session(tab)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})

    def sent(ev):
        log["urls"][ev["requestId"]] = ev["request"]["url"]
        log["last"] = time.perf_counter()

    def done(ev):
        log["bytes"] += ev.get("encodedDataLength", 0)
        log["requests"] += 1
        log["last"] = time.perf_counter()

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.loadingFinished", done)
    t0 = time.perf_counter()
    tab.goto(f"{server}/{page}", wait_until="load")
    while time.perf_counter() - log["last"] < 1.0 and time.perf_counter() - t0 < 30:  # settled
        tab.wait_for_timeout(200)
    return ctx, tab, log


def _rgb(css: str) -> tuple[float, ...]:
    parts = [float(v) for v in re.findall(r"[\d.]+", css)]
    return tuple(parts[:3]) + ((parts[3],) if len(parts) > 3 else (1.0,))


def _contrast(fg: str, bg: str) -> float:
    def lum(c):
        lin = [v / 255 / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((lum(_rgb(fg)), lum(_rgb(bg))))
    return (b + 0.05) / (a + 0.05)


def _check_badges(tab, page: str) -> None:
    """Verdict badges (claim tables, scoreboard): text at 4.5:1 against the badge."""
    for color, background, text in tab.evaluate("Array.from(document.querySelectorAll('.optbook-badge'), b =>"
                                                " [getComputedStyle(b).color, getComputedStyle(b).backgroundColor, b.textContent])"):
        if _rgb(background)[3] == 1.0:
            ratio = _contrast(color, background)
            assert ratio >= 4.5, f"{page}: badge {text!r} at {ratio:.1f}:1 ({color} on {background})"


def _draw_all(tab) -> None:
    if tab.evaluate("!!window.optbookFigures"):
        tab.evaluate("window.optbookFigures.drawAll()")
        tab.wait_for_function("Array.from(document.querySelectorAll('.optbook-plot'))"
                              ".every(d => d.querySelector('.main-svg') || d.dataset.error)", timeout=60_000)


def test_book_has_pages():
    pages = _pages()
    if not os.environ.get("OPTBOOK_HTML"):  # a whole book, not one chapter's `make page` tree
        assert "index.html" in pages or any(p.endswith("intro.html") for p in pages)
    assert any(_is_chapter(p) for p in pages), "no chapter page was built"


@pytest.mark.parametrize("page", _pages())
def test_page_on_a_desktop(page, server, browser):
    ctx, tab, log = _open(browser, server, page, width=1280, height=900)
    metrics = tab.evaluate("""() => ({
        fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0,
        tbt: window.__longtasks.reduce((s, d) => s + Math.max(0, d - 50), 0),
        html: (performance.getEntriesByType('navigation')[0] || {}).encodedBodySize || 0 })""")
    n_figures = tab.evaluate("document.querySelectorAll('figure.optbook-figure').length")
    _rows.append({"page": page, **metrics, "bytes": log["bytes"], "requests": log["requests"], "figures": n_figures})
    assert metrics["html"] <= PAGE_HTML_BUDGET, f"{page}: {metrics['html'] / 1e6:.2f} MB of HTML"
    assert log["bytes"] <= TRANSFER_BUDGET, f"{page}: {log['bytes'] / 1e6:.1f} MB transferred"
    assert 0 < metrics["fcp"] <= FIRST_PAINT_BUDGET_MS, f"{page}: first paint at {metrics['fcp']:.0f} ms"

    _draw_all(tab)
    plotly_urls = [u for u in log["urls"].values() if re.search(r"/plotly[^/]*\.js", u)]
    if n_figures == 0:
        assert not plotly_urls, f"{page}: plotly.js loaded on a page without figures: {plotly_urls}"
        assert tab.evaluate("typeof window.Plotly") == "undefined"
    else:
        assert len(plotly_urls) == 1, f"{page}: plotly.js requested {len(plotly_urls)} times"
        errors = tab.evaluate("Array.from(document.querySelectorAll('.optbook-plot[data-error]'), d => d.dataset.error)")
        assert not errors, f"{page}: figures not drawn: {errors}"
    if _is_chapter(page):
        assert n_figures >= 1, f"{page}: a chapter page must show at least one figure"

    # Every figure: a caption and a text alternative that says what it shows.
    for fig in tab.evaluate("""Array.from(document.querySelectorAll('figure.optbook-figure'), f => ({
            id: f.id, caption: (f.querySelector('figcaption') || {}).textContent || '',
            alt: f.querySelector('.optbook-plot').getAttribute('aria-label') || '',
            role: f.querySelector('.optbook-plot').getAttribute('role') }))"""):
        assert len(fig["caption"].strip()) >= 10, f"{page}: figure {fig['id']} has no caption"
        assert len(fig["alt"]) >= 30 and fig["role"] == "img", f"{page}: figure {fig['id']} has no text alternative"
    # The toolbar: no cloud upload, no lasso or box selection.
    titles = tab.evaluate("Array.from(document.querySelectorAll('.modebar-btn'), b => b.getAttribute('data-title') || '')")
    bad = [t for t in titles if re.search(r"cloud|chart studio|lasso|box select", t, re.I)]
    assert not bad, f"{page}: toolbar offers {sorted(set(bad))}"

    _check_badges(tab, page)

    # Math typeset wherever the page has math.
    if tab.evaluate("document.querySelectorAll('.math').length") > 0:
        tab.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=20_000)

    # Every slider: reachable by Tab, a 44 px target, and the keyboard moves the figure.
    sliders = tab.locator("figure.optbook-figure input[type=range]")
    for k in range(sliders.count()):
        s = sliders.nth(k)
        info = s.evaluate("i => ({h: i.getBoundingClientRect().height, tab: i.tabIndex, v: +i.value, max: +i.max,"
                          " fig: i.closest('figure').id})")
        assert info["tab"] >= 0 and info["h"] >= 44, f"{page}: slider {k} is not a 44 px keyboard target: {info}"
        gd = f"document.getElementById('{info['fig']}').querySelector('.optbook-plot')"
        before = tab.evaluate(f"({SNAPSHOT})({gd})")
        s.focus()
        tab.keyboard.press("Home" if info["v"] == info["max"] else "End")
        tab.wait_for_function(f"({SNAPSHOT})({gd}) !== {json.dumps(before)}", timeout=10_000)
        assert s.evaluate("i => i.getAttribute('aria-valuetext')") == s.evaluate(
            "i => i.closest('.optbook-slider').querySelector('output').textContent")

    ctx.close()
    assert not log["errors"], f"{page}: console errors: {log['errors']}"
    assert not log["failed"], f"{page}: local resources failed to load: {log['failed']}"


@pytest.mark.parametrize("page", _pages())
def test_page_on_a_phone_in_dark_mode(page, server, browser):
    ctx, tab, log = _open(browser, server, page, width=390, height=844, mode="dark")
    assert tab.evaluate("document.documentElement.dataset.theme") == "dark"
    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{page}: {overflow}px of horizontal overflow at 390 px"
    _check_badges(tab, page)
    if tab.evaluate("document.querySelectorAll('.math').length") > 0:
        tab.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=20_000)
    cut = tab.evaluate(BEYOND_COLUMN)
    assert not cut, f"{page}: content cut off at the column's edge at 390 px: {cut}"
    name = page.replace("/", "__").removesuffix(".html")
    if _is_chapter(page) or page.endswith("intro.html"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"{name}-phone-dark.png"))
    _draw_all(tab)
    backgrounds = tab.evaluate("Array.from(document.querySelectorAll('.optbook-plot .main-svg'),"
                               " s => getComputedStyle(s).backgroundColor)")
    assert all(b in ("rgba(0, 0, 0, 0)", "transparent") for b in backgrounds), f"{page}: {set(backgrounds)}"
    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{page}: figures overflow the phone's width by {overflow}px"
    if _is_chapter(page) and tab.locator("figure.optbook-figure").count():
        first = tab.locator("figure.optbook-figure").first
        first.scroll_into_view_if_needed()
        tab.wait_for_timeout(300)
        first.screenshot(path=str(SHOTS / f"{name}-phone-dark-figure1.png"))
    ctx.close()
    assert not log["errors"], f"{page}: console errors: {log['errors']}"


#: Book-level pages (outside the parts) and what each must show, by CSS selector and least count.
BOOK_PAGES = {
    "race.html": [("figure.optbook-figure", 4), ("table.optbook-claims", 4)],   # a table and a figure per class
    "status.html": [("table", 2)],                                              # execution table, versions
    "scoreboard.html": [("table.optbook-claims", 1)],
}


def _book_page(name: str) -> str | None:
    return next((p for p in _pages() if p == name or p.endswith("/" + name)), None)


@pytest.mark.parametrize("name", [n for n in BOOK_PAGES if not os.environ.get("OPTBOOK_HTML") or _book_page(n)])
def test_book_level_page_shows_its_content(name, server, browser):
    page = _book_page(name)
    assert page, f"{name} was not built: is it in _toc.yml?"
    ctx, tab, log = _open(browser, server, page, width=1280, height=900)
    _draw_all(tab)
    for selector, least in BOOK_PAGES[name]:
        n = tab.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length")
        assert n >= least, f"{page}: {n} × {selector}, expected at least {least}"
    if name == "status.html":
        # myst-nb's execution table: one row per executed page, every chapter of this build among them.
        rows = tab.evaluate("Array.from(document.querySelectorAll('table')).find(t => /Run Time/.test(t.textContent))"
                            "?.querySelectorAll('tbody tr').length || 0")
        assert rows >= max(1, sum(_is_chapter(p) for p in _pages())), f"{page}: execution table has {rows} rows"
        assert re.search(r"Built on\s+\w+", tab.inner_text("main")), f"{page}: no build date"
    ctx.close()
    assert not log["errors"], f"{page}: console errors: {log['errors']}"


def _catalog():
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import optbook_catalog
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    return optbook_catalog


# The book-wide pages, each with a count of what it must show, from the same data the build reads.
def _expected_counts() -> dict[str, tuple[str, int]]:
    cat = _catalog()
    plan, done = cat.load_plan(ROOT), cat.load_published(ROOT)
    exercises = cat.exercises(ROOT)
    from optbook import methods

    rows = methods.index()
    return {
        "book/intro.html": (".optbook-ideas .optbook-chip a", sum(len(c.ideas) for c in plan.chapters if c.number in done)),
        "book/paths.html": (".optbook-paths ol > li", sum(len(p.steps) for p in cat.load_paths(ROOT))),
        "book/teaching.html": (".optbook-exercises li", sum(len(exercises[n]) for n in done if n in exercises)),
        "book/methods.html": (".optbook-methods li li", len(rows)),
        "book/api.html": ("dl.py > dt[id^='optbook.']", len({r.path for r in rows if r.path.startswith("optbook.")})),
    }


@pytest.mark.parametrize("page", sorted(_expected_counts()))
def test_book_wide_pages_show_everything_their_data_lists(page, server, browser):
    if not (HTML / page).exists():
        pytest.skip(f"{page} is not in this build (one chapter's `make page` tree)")
    selector, expected = _expected_counts()[page]
    ctx, tab, log = _open(browser, server, page, width=1280, height=900)
    found = tab.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length")
    ctx.close()
    # the API reference also documents optbook.core, so it holds at least the indexed objects
    assert found == expected or (page.endswith("api.html") and found >= expected), \
        f"{page}: {found} of {selector}, expected {expected}"
    assert not log["errors"], f"{page}: console errors: {log['errors']}"
