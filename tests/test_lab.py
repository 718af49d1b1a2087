"""The live explorers in a real JupyterLab, as a Binder or local reader meets them.

JupyterLab starts on a free localhost port with a token and the project's kernel (the ``python3``
kernel of this environment, importing this tree's ``optbook``); headless Debian chromium (through
playwright, no browser download) opens chapter notebooks (the ``.ipynb`` twins, copied to a
scratch folder so that nothing Lab saves can touch the repository), runs all their cells, moves the
first live explorer's slider from the keyboard a few times, and asserts that the figure changed each
time, measuring how long each move took end to end (key press, kernel callback, figure drawn). The
design's target is 150 ms a move; on a loaded 2-core machine the assertions keep wide margins (10x
for the kernel callback, 5 s for the whole move) and the measured times go to ``_build/lab-shots/latency.md`` beside the screenshots of each notebook
(top of the page, the explorer before and after the moves).

``OPTBOOK_LAB_CHAPTERS`` (e.g. ``01,08``) picks other chapters; the default three run all their cells
at full size in the fewest seconds (claims included, a few seconds each).
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "_build" / "lab-shots"
CHROMIUM = os.environ.get("OPTBOOK_CHROMIUM") or "/usr/bin/chromium"  # tools/need-chromium.sh
CHAPTERS = (os.environ.get("OPTBOOK_LAB_CHAPTERS") or "08,02,03").split(",")
TARGET_MS = 150          # DESIGN.md: a live widget answers every move, the first included, in 150 ms
# Asserted with wide margins, the target recorded: on the shared 2-core machine at load 12, moves took
# 1.2-3.6 s from key press to figure while the kernel callback itself took 90-270 ms.
CALLBACK_BUDGET_MS = 10 * TARGET_MS   # the explorer's own report: the callback in the kernel
MOVE_BUDGET_MS = 5000                 # key press to new figure drawn: a move that answers at all
MOVES = ("forward", "forward", "back")
RUN_TIMEOUT_S = 150      # one chapter, all cells, at full size

pytestmark = [pytest.mark.lab, pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]

# Lab's settings for the run: no autosave, no news or update pop-ups over the screenshots.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}

# Every code cell run, the kernel idle: [done, errors].
RUN_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  for (const c of cells) for (const o of c.model.outputs.toJSON())
    if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
  const done = kernel && kernel.status === 'idle' && cells.every(c => c.model.executionCount !== null);
  return [done, errors];
}"""
# The first live explorer: a widget box holding a slider handle and a drawn plotly figure.
FIND_EXPLORER = """() => {
  for (const box of document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-vbox')) {
    if (box.querySelector('.noUi-handle') && box.querySelector('.js-plotly-plot')) {
      box.id = box.id || 'optbook-explorer';
      return box.id;
    }
  }
  return null;
}"""
# The figure's data and layout text: what a reader sees change.
SNAPSHOT = """id => {
  const gd = document.getElementById(id).querySelector('.js-plotly-plot');
  if (!gd || !gd._fullData) return null;
  return JSON.stringify([gd._fullData.map(t => ['x', 'y', 'z'].map(k => t[k] == null ? null
      : Array.from(t[k], v => (v != null && typeof v === 'object') ? Array.from(v) : v))),
      (gd.layout.title && gd.layout.title.text) || '', gd.layout.annotations || [], gd.layout.shapes || []]);
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chapter_twin(chapter: str) -> Path:
    found = sorted(ROOT.glob(f"book/part*/{chapter}-*.ipynb"))
    assert found, f"no .ipynb twin for chapter {chapter} under book/part*/ (make notebooks)"
    return found[0]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a scratch copy of the chapters' twins: (base URL, token, notebook paths)."""
    home = tmp_path_factory.mktemp("lab")
    paths = []
    for ch in CHAPTERS:
        twin = _chapter_twin(ch)
        rel = twin.relative_to(ROOT)
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(twin, home / rel)
        paths.append(rel.as_posix())
    for name, value in SETTINGS.items():
        (home / ".settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / ".settings" / name).write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k not in ("OPTBOOK_BUILD", "PLOTLY_RENDERER")}
    # The kernel (this interpreter) imports this tree's optbook, as an installed checkout would.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env.update(JUPYTER_RUNTIME_DIR=str(home / ".runtime"), JUPYTER_CONFIG_DIR=str(home / ".config"),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    log = open(home / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={home}", f"--LabApp.user_settings_dir={home / '.settings'}",
         f"--LabApp.workspaces_dir={home / '.workspaces'}", "--LabApp.expose_app_in_browser=True",
         "--allow-root"],  # CI containers run as root; harmless otherwise
        cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(home / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.3)
        yield base, token, paths
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def tab(lab):
    """One JupyterLab tab in headless chromium, the app loaded."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: install it with: apt-get install -y chromium (as root)")
    base, token, _ = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/lab?token={token}")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        yield page
        browser.close()


def _move(page, box: str, direction: str) -> dict:
    """Press an arrow key on the explorer's slider (``direction``, turned round at either end);
    wait until the figure is redrawn with other data. Returns the milliseconds from the key press
    to the new figure on screen, and the kernel callback's own time as the explorer reports it."""
    before = page.evaluate(SNAPSHOT, box)
    status = page.locator(f"#{box} .widget-html").first
    status_before = status.inner_text()
    handle = page.locator(f"#{box} .noUi-handle").first
    now, low, high = (float(handle.get_attribute(f"aria-value{k}")) for k in ("now", "min", "max"))
    if now in (low, high):  # at an end of the slider: the only way is back
        direction = "forward" if now == low else "back"
    handle.focus()
    page.evaluate("() => { window.__optbook_t0 = performance.now(); }")
    handle.press("ArrowRight" if direction == "forward" else "ArrowLeft")
    try:
        page.wait_for_function(f"""([id, before]) => {{
            const now = ({SNAPSHOT})(id);
            if (now === null || now === before) return false;
            window.__optbook_ms = performance.now() - window.__optbook_t0;
            return true;
        }}""", arg=[box, before], timeout=30_000, polling="raf")
    except PlaywrightTimeout as err:
        state = page.evaluate("""id => { const b = document.getElementById(id), h = b.querySelector('.noUi-handle');
            return [h.getAttribute('aria-valuenow'), h.getAttribute('aria-valuemax'),
                    b.querySelector('.widget-readout') && b.querySelector('.widget-readout').innerText,
                    b.querySelector('.widget-html').innerText, document.activeElement.className]; }""", box)
        pytest.fail(f"the figure did not change after {direction} (slider now, max, readout, status, focus: "
                    f"{state}): {err}")
    ms = page.evaluate("() => window.__optbook_ms")
    try:  # the status line follows the figure in a message of its own (the same text is possible)
        page.wait_for_function("([el, old]) => el.innerText !== old", arg=[status.element_handle(), status_before],
                               timeout=2000)
    except PlaywrightTimeout:
        pass
    report = status.inner_text().strip()
    callback = re.search(r"redrawn in (\d+) ms", report)
    assert callback, f"the explorer did not report its redraw: {report!r}"
    return {"direction": direction, "ms": round(ms, 1), "callback_ms": int(callback.group(1))}


def _run_all(page, path: str) -> float:
    """Open a notebook, run all its cells; the seconds it took. Fails on any error output."""
    page.evaluate("async p => { await window.jupyterapp.commands.execute('docmanager:open', {path: p, factory: 'Notebook'}); }",
                  path)
    page.wait_for_function("""p => { const w = window.jupyterapp.shell.currentWidget;
        return w && w.context && w.context.path === p && w.sessionContext.session
               && w.sessionContext.session.kernel && w.sessionContext.session.kernel.status === 'idle'; }""",
                           arg=path, timeout=60_000)
    t0 = time.monotonic()
    # Cleared first: "done" below means every code cell got a fresh execution count.
    page.evaluate("""async () => { await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
                                   window.jupyterapp.commands.execute('notebook:run-all-cells'); }""")
    deadline = t0 + RUN_TIMEOUT_S
    time.sleep(2)  # let the kernel turn busy before the first look
    while True:
        done, errors = page.evaluate(RUN_STATE)
        assert not errors, f"{path}: cell error in JupyterLab: {errors[0]}"
        if done:
            return time.monotonic() - t0
        assert time.monotonic() < deadline, f"{path}: not finished in {RUN_TIMEOUT_S} s"
        time.sleep(0.5)


def _close(page) -> None:
    """Shut the notebook's kernel down and close it without saving (the copy is scratch anyway)."""
    page.evaluate("""async () => { const w = window.jupyterapp.shell.currentWidget;
        await w.sessionContext.shutdown(); w.context.model.dirty = false; w.dispose(); }""")


def test_live_explorers_answer_in_jupyterlab(lab, tab):
    SHOTS.mkdir(parents=True, exist_ok=True)
    rows = []
    for chapter, path in zip(CHAPTERS, lab[2]):
        seconds = _run_all(tab, path)
        tab.evaluate("async () => { await window.jupyterapp.shell.currentWidget.content.scrollToItem(0); }")
        tab.screenshot(path=str(SHOTS / f"{chapter}-top.png"))
        box = tab.evaluate(FIND_EXPLORER)
        assert box, f"{path}: no live explorer (slider and figure) after running all cells"
        # Lab's windowed notebook can scroll back after a plain scroll: bring the slider up by focus.
        tab.locator(f"#{box} .noUi-handle").first.focus()
        tab.wait_for_timeout(300)
        tab.screenshot(path=str(SHOTS / f"{chapter}-explorer-before.png"))
        timed = [_move(tab, box, m) for m in MOVES]
        tab.screenshot(path=str(SHOTS / f"{chapter}-explorer-after.png"))
        tab.evaluate("id => document.getElementById(id).removeAttribute('id')", box)
        rows.append({"chapter": chapter, "notebook": path, "run_all_s": round(seconds, 1), "moves": timed})
        _close(tab)
    _write_report(rows)
    moves = [(r["chapter"], m) for r in rows for m in r["moves"]]
    slow = [(ch, m["callback_ms"]) for ch, m in moves if m["callback_ms"] > CALLBACK_BUDGET_MS]
    assert not slow, f"explorer callbacks over {CALLBACK_BUDGET_MS} ms (target {TARGET_MS} ms): {slow}"
    slow = [(ch, m["ms"]) for ch, m in moves if m["ms"] > MOVE_BUDGET_MS]
    assert not slow, f"live moves over {MOVE_BUDGET_MS} ms, key press to figure (target {TARGET_MS} ms): {slow}"


def _write_report(rows: list[dict]) -> None:
    every = [m["ms"] for r in rows for m in r["moves"]]
    lines = [f"Live explorer moves in JupyterLab, key press to new figure drawn (target {TARGET_MS} ms).", "",
             "| chapter | run all (s) | moves, key press to figure (ms) | kernel callback (ms) |", "|---|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['chapter']} | {r['run_all_s']} | {', '.join(str(m['ms']) for m in r['moves'])} | "
                     f"{', '.join(str(m['callback_ms']) for m in r['moves'])} |")
    lines += ["", f"median {statistics.median(every):.0f} ms, max {max(every):.0f} ms over {len(every)} moves; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"]
    (SHOTS / "latency.md").write_text("\n".join(lines) + "\n")
    (SHOTS / "latency.json").write_text(json.dumps(rows, indent=1))


def test_lab_loads_every_installed_extension():
    # An extension Lab finds incompatible is installed but never loaded: jupyterlab-myst 2.7.0 with
    # JupyterLab 4.6 (a @jupyter/ydoc conflict) left MyST unrendered; the live figures need anywidget's.
    out = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True,
                         text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
    assert "not compatible" not in text and " X" not in text, text
    for name in ("jupyterlab-myst", "anywidget", "jupyterlab-plotly", "@jupyter-widgets/jupyterlab-manager"):
        assert re.search(rf"{re.escape(name)} v\S+ enabled\s+OK", text), f"{name} not enabled and OK:\n{text}"
