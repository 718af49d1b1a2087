"""Command line: ``python -m optbook claims | list | notebook | bench | warm | verdicts | twins | student``."""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

from . import claims
from .core.parallel import BACKENDS, pmap


def _run_chapter_claims(keys: list[str], fast: bool) -> list[claims.ClaimResult]:
    """One chapter's claims in order, without their ``details`` (figures' data: the table does
    not show them, and they need not travel back from a worker process)."""
    results = [claims.run_claim(key, fast=fast) for key in keys]
    for r in results:
        r.details = None
    return results


def _cmd_claims(args) -> int:
    def report(_keys, rows):
        if args.progress:
            for r in rows:
                print(f"  {r.key}: {r.verdict} ({r.seconds:.1f} s)", file=sys.stderr, flush=True)

    # One task per chapter: a chapter's claims share its cached experiments (split across
    # workers, each would recompute them). With --jobs N, N chapters run at once; the results
    # come back in chapter order, the same as the serial run's.
    wanted = set(args.chapter.split(",")) if args.chapter else None
    chapters: dict[str, list[str]] = {}
    for c in claims.registered(None, args.kind):
        if wanted is None or c.chapter in wanted:
            chapters.setdefault(c.chapter, []).append(c.key)
    per_chapter = pmap(functools.partial(_run_chapter_claims, fast=args.fast), list(chapters.values()),
                       jobs=args.jobs, backend=args.backend, progress=report)
    results = [r for rows in per_chapter for r in rows]
    if not results:
        print(f"no claims registered{' for chapter ' + args.chapter if args.chapter else ''}"
              f"{' of kind ' + args.kind if args.kind else ''}")
        return 1
    print(claims.format_table(results))
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_dict() for r in results], indent=1))
    bad = [r for r in results if not r.ok]
    for r in bad:
        print(f"MISMATCH {r.key}: {r.verdict} (holds={r.holds}, control holds={r.control_holds}, "
              f"precondition={r.precondition}; the chapter declares reproduces={r.reproduces})")
    return 1 if bad else 0


def _cmd_list(args) -> int:
    for c in claims.registered(args.chapter, args.kind):
        flag = {True: "", False: "  [declared: does not reproduce]", None: "  [declared: inconclusive]"}[c.reproduces]
        print(f"{c.key:40s} {c.kind:12s} {c.title}{flag}")
    return 0


def _execute(path: Path, timeout: int):
    """Execute one chapter as the build does (OPTBOOK_BUILD=1, in its folder); the executed
    notebook and the seconds it took."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    os.environ["OPTBOOK_BUILD"] = "1"
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb, time.perf_counter() - t0


def _chapter_path(chapter: str) -> Path:
    found = sorted(Path("book").glob(f"part*/{chapter}-*.md"))
    if not found:
        raise SystemExit(f"no chapter {chapter} under book/part*/ (run from the project root)")
    return found[0]


def _cmd_notebook(args) -> int:
    """Execute one chapter as the build does; report seconds, warnings in outputs, output bytes."""
    path = _chapter_path(args.chapter)
    nb, seconds = _execute(path, args.timeout)
    stderr = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("name") == "stderr"]
    size = len(json.dumps([c.get("outputs", []) for c in nb.cells if c.cell_type == "code"]))
    print(f"{path}: executed in {seconds:.1f} s; outputs {size / 1e6:.2f} MB; {len(stderr)} stderr outputs")
    for text in stderr:
        print("  stderr: " + text.strip().replace("\n", "\n          ")[:2000])
    return 1 if stderr else 0


def _cmd_bench(args) -> int:
    from .widgets import registered_explorers

    report: dict = {"claims": [], "explorers": [], "notebooks": []}
    for c in claims.registered(args.chapter):
        row = {"claim": c.key}
        for fast in (True, False):
            t0 = time.perf_counter()
            claims.run_claim(c, fast)  # with its control, as the tests and the chapter run it
            row["fast_s" if fast else "full_s"] = round(time.perf_counter() - t0, 2)
        report["claims"].append(row)
    for e in registered_explorers(args.chapter):
        report["explorers"].append({"explorer": f"{e.chapter}.{e.name}", **{k: round(v, 1) for k, v in e.latency_ms().items()}})
    if not args.skip_notebooks:
        for path in sorted(Path("book").glob("part*/[0-9][0-9]-*.md")):
            if args.chapter and not path.name.startswith(args.chapter):
                continue
            report["notebooks"].append({"notebook": str(path), "seconds": round(_execute(path, 600)[1], 1)})
    for section, rows in report.items():
        if rows:
            print(f"\n{section}")
            for row in rows:
                print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))
    Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def _cmd_warm(args) -> int:
    """Train and cache Part VII's tiny language models before the chapters and tests that use them."""
    from .core.cache import cache_dir
    from .llm import tinylm

    t0 = time.perf_counter()
    tinylm.warm()
    print(f"tiny language models cached in {cache_dir()} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _cmd_verdicts(args) -> int:
    """Record the full-size claim results by date, or show what changed since the last record."""
    from . import verdicts

    found = claims.load_results(args.source) if Path(args.source).is_dir() else []
    if args.action == "record":
        if not found and not args.run:
            print(f"no claim results in {args.source}: build the book first (make book), or pass --run "
                  "to run every claim at full size here (long)", file=sys.stderr)
            return 2
        results = found or claims.run()
        path = verdicts.record(results, args.out, date=args.date)
        print(f"recorded {len(results)} claims in {path}")
        return 0
    against = Path(args.against) if args.against else verdicts.latest(args.out)
    if against is None:
        print(f"no recorded verdicts in {args.out}", file=sys.stderr)
        return 2
    if not found:
        print(f"no claim results in {args.source}: build the book first (make book)", file=sys.stderr)
        return 2
    changes = verdicts.diff(verdicts.load(against), found)
    for c in changes:
        if c.change != "unchanged":
            print(f"{c.key:40s} {c.change:16s} {c.verdict_before} -> {c.verdict_after}; "
                  f"{c.figure_before} -> {c.figure_after}")
    print(f"{sum(c.change == 'unchanged' for c in changes)} of {len(changes)} claims unchanged since {against.name}")
    return 0


def _cmd_twins(args) -> int:
    """Write the chapters' .ipynb twins in plain Jupyter Markdown (see optbook.twins)."""
    from . import launch, twins

    for path in launch.sync():
        print(f"launch target written into {path}")
    sources = [_chapter_path(c) for c in args.chapters] if args.chapters else twins.chapters()
    for twin, origin, missing in twins.write_twins(sources, Path(args.cache)):
        note = {"cache": "glued values from the executed build", "twin": "glued values kept (code unchanged)",
                "none": "no executed build of this code: glued values are placeholders"}[origin]
        print(f"{twin}: {note}" + (f" ({missing} placeholders)" if missing else ""))
    return 0


def _cmd_student(args) -> int:
    """Write student copies of the chapters (solutions removed) to --out."""
    from . import student, twins

    sources = [_chapter_path(c) for c in args.chapters] if args.chapters else twins.chapters()
    try:
        written = student.write_student_notebooks(args.out, sources, Path(args.cache))
    except ValueError as exc:
        raise SystemExit(f"python -m optbook student: {exc}") from None
    print(f"{len(written)} student notebooks in {args.out}")
    return 0


def _positive_int(flag: str):
    """An argparse type: an integer >= 1, else an error naming ``flag``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= 1, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= 1, got {value}")
        return value
    return parse


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m optbook", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("claims", help="run the registered claims and print the scoreboard")
    p.add_argument("--chapter", help="two-digit chapter number, e.g. 01, or several: 02,08")
    p.add_argument("--fast", action="store_true", help="small versions (what the tests run)")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument("--kind", choices=claims.KINDS, help="only reproductions or only identities")
    p.add_argument("--progress", action="store_true", help="print each claim as it finishes")
    p.add_argument("--jobs", type=_positive_int("--jobs"), default=1,
                   help="claims run at once, each in its own process (default 1: serial)")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="joblib backend for --jobs > 1: local processes (loky) or a Dask cluster (dask)")
    p.set_defaults(func=_cmd_claims)
    p = sub.add_parser("list", help="list the registered claims")
    p.add_argument("--chapter")
    p.add_argument("--kind", choices=claims.KINDS)
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("notebook", help="execute one chapter as the build does and time it")
    p.add_argument("chapter", help="two-digit chapter number")
    p.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    p.set_defaults(func=_cmd_notebook)
    p = sub.add_parser("bench", help="claim seconds (fast, full), widget latency, notebook seconds")
    p.add_argument("--chapter")
    p.add_argument("--json", default="bench.json")
    p.add_argument("--skip-notebooks", action="store_true")
    p.set_defaults(func=_cmd_bench)
    p = sub.add_parser("warm", help="train and cache the tiny language models of Part VII")
    p.set_defaults(func=_cmd_warm)
    p = sub.add_parser("verdicts", help="record the full-size claim results by date, or diff against the last record")
    p.add_argument("action", choices=("record", "diff"))
    p.add_argument("--from", dest="source", default="_build/claims",
                   help="folder of full-size results the book build wrote (default _build/claims)")
    p.add_argument("--out", default="book/verdicts", help="folder of recorded files (default book/verdicts)")
    p.add_argument("--date", help="YYYY-MM-DD (default today, UTC)")
    p.add_argument("--against", help="a recorded file to diff against (default the latest)")
    p.add_argument("--run", action="store_true", help="record: run every claim at full size if --from is empty")
    p.set_defaults(func=_cmd_verdicts)
    p = sub.add_parser("twins", help="write the chapters' .ipynb twins in plain Jupyter Markdown "
                                     "(and the launch target into the install cells and README)")
    p.add_argument("chapters", nargs="*", help="two-digit chapter numbers (default: every chapter)")
    p.add_argument("--cache", default="_build/.jupyter_cache",
                   help="an executed build's jupyter-cache, read for the glued values")
    p.set_defaults(func=_cmd_twins)
    p = sub.add_parser("student", help="write student copies of the chapters (solutions removed)")
    p.add_argument("chapters", nargs="*", help="two-digit chapter numbers (default: every chapter)")
    p.add_argument("--out", default="_build/student", help="folder for the copies (never a chapter folder)")
    p.add_argument("--cache", default="_build/.jupyter_cache",
                   help="an executed build's jupyter-cache, read for the glued values")
    p.set_defaults(func=_cmd_student)
    args = ap.parse_args(argv)
    if args.cmd == "notebook" and args.timeout <= 0:
        ap.error(f"--timeout must be positive, got {args.timeout}")
    for c in getattr(args, "chapters", None) or []:
        if not (len(c) == 2 and c.isdigit()):
            ap.error(f"chapters must be two digits like 01, got {c!r}")
    several = args.chapter.split(",") if args.cmd == "claims" and args.chapter else [getattr(args, "chapter", None)]
    if any(ch and not (len(ch) == 2 and ch.isdigit()) for ch in several):
        ap.error(f"--chapter must be two digits like 01{' (or a list: 02,08)' if args.cmd == 'claims' else ''}, "
                 f"got {args.chapter!r}")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
