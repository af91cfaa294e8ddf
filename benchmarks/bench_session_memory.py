"""What one annotator's session holds on the server, entry by entry.

Runs the Human baseline page (through app.py) with Streamlit's AppTest, in this process, as an annotator of a
Test-Hard study made of its largest references, answers ``--answers`` questions through the
page, and then measures what the session keeps between runs: every session-state entry
(values of widgets and of the page), the arguments its widgets' callbacks keep, and the page
globals those callbacks keep alive (a callback defined in a page holds that run's globals).
Shared objects (modules, functions, classes, Streamlit's caches) are not counted.

    .venv/bin/python benchmarks/bench_session_memory.py            # 5 answers
    .venv/bin/python benchmarks/bench_session_memory.py --answers 20

``bench_annotators.py`` measures the same from outside: the server's RSS growth per session.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import types
from pathlib import Path

from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.pages.answer_boxes import answer_box, press  # noqa: E402 - the answer element as AppTest drives it

APP = ROOT / "app.py"
SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
MAX_OBJECTS = 200_000


def deep_size(root: object, seen: dict[int, object]) -> int:
    """Bytes of ``root`` and what it holds, each object once (``seen`` is shared between calls and
    keeps what it saw alive, so no id is reused), without following modules, functions and
    classes (shared by every session)."""
    total, stack, visited = 0, [root], 0
    while stack and visited < MAX_OBJECTS:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, SKIP):
            continue
        seen[id(obj)] = obj
        visited += 1
        total += sys.getsizeof(obj, 64)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif isinstance(obj, (str, bytes, bytearray, int, float, bool)) or obj is None:
            continue
        else:
            if hasattr(obj, "__dict__"):
                stack.append(vars(obj))
            for slot in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, slot):
                    stack.append(getattr(obj, slot))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STRUCTEXT_DB"] = str(Path(tmp) / "structext.db")
        rows = sorted(suites.generate_suite("test-hard", seed=0), key=lambda r: -len(r["reference"]))
        db = storage.open_db()
        user = accounts.create_user(db, "ann", "password-123", "annotator")
        structext_study.create_study(db, name="big", suite="test-hard", samples=rows[:args.answers + 5],
                           n_items=args.answers + 5, annotator_ids=[user["id"]], seed=0)
        at = AppTest.from_file(str(APP), default_timeout=60)  # through app.py, as the server runs a page
        at.session_state["user"] = user
        at.run()
        at.switch_page("pages/human_baseline.py")
        at.run()
        at = next(b for b in at.button if b.label == "I have read the rule: start").click().run()
        for n in range(args.answers):
            answer_box(at).input(f"answer {n}")
            at = press(at, "Submit answer")
            assert not at.exception, at.exception
        longest = max(len(r["reference"]) for r in rows[:args.answers + 5])
        state = at.session_state._state._state  # AppTest wraps a SafeSessionState around the SessionState
        seen: dict[int, object] = {}
        entries = []
        for key in list(state.filtered_state):
            entries.append((f"state {key!r}", deep_size(state[key], seen)))
        metadata = state._new_widget_state.widget_metadata
        args_size = sum(deep_size((m.callback_args, m.callback_kwargs), seen) for m in metadata.values())
        entries.append((f"callback arguments of {len(metadata)} widgets", args_size))
        namespaces = {id(g): g for m in metadata.values() if m.callback is not None
                      for g in [getattr(m.callback, "__globals__", None)] if g is not None}
        kept = sum(deep_size({k: v for k, v in g.items() if not k.startswith("__")}, seen)
                   for g in namespaces.values())
        entries.append((f"page globals kept by callbacks ({len(namespaces)} run(s))", kept))
        total = sum(size for _, size in entries)
        print(f"one annotator after {args.answers} answers on Test-Hard's largest questions "
              f"(longest reference {longest:,} characters):")
        for name, size in sorted(entries, key=lambda e: -e[1])[:15]:
            print(f"  {size / 1024:9.1f} KB  {name}")
        print(f"  {total / 1024:9.1f} KB  in all ({total / 2 ** 20:.2f} MB per session; goal <= 10 MB)")


if __name__ == "__main__":
    main()
