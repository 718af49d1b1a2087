"""Package-wide bad-input test: every public callable of optbook refuses a broken numeric knob.

The chapters' own tests feed hand-picked bad inputs to their functions; this test enumerates the
public callables of every module instead (functions and classes defined there, not imported), so
a function added tomorrow cannot slip. For each parameter whose default is a number, it calls the
callable with that one knob broken (NaN or infinity for a float knob; 2.5 or NaN for an integer
one) and every other argument at its default, and asserts a ``ValueError`` (or, for a wrong
type, a ``TypeError``) whose message names the parameter, raised before any real work (a few
seconds at most): a NaN that runs a whole experiment, or an error that names an inner argument
the caller never passed, fails.

Callables with required arguments other than ``rng``, ``seed`` and ``fast`` cannot be called
generically; their modules' own tests hold tables of bad calls for them.
"""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import signal
import warnings

import numpy as np
import pytest

import optbook

#: Values for required arguments that the test can supply by name.
BY_NAME = {"rng": lambda: np.random.default_rng(0), "seed": lambda: 0, "fast": lambda: True}
#: Seconds a call with a broken knob may take before it counts as "did the work anyway".
LIMIT_S = 6


def _public_callables():
    for info in pkgutil.walk_packages(optbook.__path__, prefix="optbook."):
        module = importlib.import_module(info.name)
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield module.__name__, name, obj


def _knob_cases():
    cases = []
    for module, name, obj in _public_callables():
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        required = [p.name for p in params if p.default is p.empty]
        if any(r not in BY_NAME for r in required):
            continue
        for p in params:
            d = p.default
            if d is p.empty or isinstance(d, bool) or not isinstance(d, (int, float)):
                continue
            for bad in ((math.nan, math.inf) if isinstance(d, float) else (2.5, math.nan)):
                cases.append(pytest.param(obj, required, p.name, bad, id=f"{module}.{name}-{p.name}={bad}"))
    return cases


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow


@pytest.mark.parametrize("func, required, knob, bad", _knob_cases())
def test_a_broken_knob_is_refused_by_name(func, required, knob, bad):
    kwargs = {r: BY_NAME[r]() for r in required}
    kwargs[knob] = bad
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(LIMIT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(**kwargs)
    except _TooSlow:
        pytest.fail(f"{knob}={bad} was not checked: the call was still working after {LIMIT_S} s")
    except (ValueError, TypeError) as err:
        assert knob in str(err), f"{knob}={bad} refused, but the message does not name {knob!r}: {err}"
    else:
        pytest.fail(f"{knob}={bad} was accepted")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_the_enumeration_sees_the_package():
    """The knob test above is only as good as its enumeration: it must find the chapters' figure
    builders and the core's problem factories (a broken walk would make it pass vacuously)."""
    ids = {f"{m}.{n}" for m, n, _ in _public_callables()}
    assert {"optbook.classical.bfgs_chapter.cubic_figure", "optbook.core.problems.make_logistic",
            "optbook.claims.claim"} <= ids
    assert len(_knob_cases()) > 300
