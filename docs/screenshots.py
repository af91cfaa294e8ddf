"""The site's screenshots: take them with the browser journeys and store them, smaller, in
``docs/screenshots/`` (committed, so the README's build of the site shows them).

    .venv/bin/python docs/screenshots.py              # run the journeys that take them, then store
    .venv/bin/python docs/screenshots.py --last-run   # store what tests/screenshots holds now

Every picture a page names (``<!-- screenshot: NAME | caption -->``) is taken by one browser journey
(``tests/browser``); this runs only those journey files, one after another (a few minutes, not the
whole suite), each as ``pytest -m browser FILE``. Each ``tests/screenshots/NAME.png`` is then stored
as ``docs/screenshots/NAME.png`` with at most 256 colours (the app's flat colours survive; a full
page is a tenth of a megabyte or less; a very tall one gets fewer colours or is scaled down to stay
under 150 KB). A stored picture that no page names any more is removed.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "docs" / "screenshots"
#: The most one stored picture may weigh (tests/test_docs_site.py holds the folder to it).
MAX_BYTES = 150_000


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def journeys_taking(names, journeys: Path) -> dict[Path, list[str]]:
    """The journey files that take the named pictures, each with the names it takes."""
    found: dict[Path, list[str]] = {}
    for journey in sorted(journeys.glob("test_*.py")):
        text = journey.read_text(encoding="utf-8")
        taken = [n for n in names if f'"{n}"' in text]
        if taken:
            found[journey] = taken
    return found


def store(source: Path, target: Path) -> int:
    """``source`` written to ``target`` as an optimised PNG of at most 256 colours (no dithering); a
    picture still over MAX_BYTES gets fewer colours, then is scaled down (a very tall page). Its size."""
    from PIL import Image

    with Image.open(source) as image:
        picture = image.convert("RGB")
    target.parent.mkdir(parents=True, exist_ok=True)
    tries = [(colours, 1.0) for colours in (256, 128, 64)] + [(64, scale) for scale in (0.85, 0.7, 0.6, 0.5)]
    for colours, scale in tries:
        scaled = picture if scale == 1.0 else picture.resize(
            (round(picture.width * scale), round(picture.height * scale)), Image.Resampling.LANCZOS)
        flat = scaled.quantize(colors=colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        flat.save(target, "PNG", optimize=True)
        if target.stat().st_size <= MAX_BYTES:
            break
    return target.stat().st_size


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="docs/screenshots.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--last-run", action="store_true",
                        help="store the pictures tests/screenshots holds now, without running the journeys")
    args = parser.parse_args(argv)
    hooks = _hooks()
    names = sorted(hooks._referenced_shots(ROOT / "docs"))
    journeys = journeys_taking(names, hooks.JOURNEYS)
    if not args.last_run:
        for journey, taken in journeys.items():
            print(f"{journey.relative_to(ROOT)}: {len(taken)} picture(s) for the site ...", flush=True)
            status = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "browser",
                                      str(journey.relative_to(ROOT))], cwd=ROOT)
            if status:
                print(f"{journey.relative_to(ROOT)} failed (exit {status}): its pictures are not stored", file=sys.stderr)
                return 1
    lacking = [n for n in names if not (hooks.SCREENSHOTS / f"{n}.png").is_file()]
    if lacking:
        print(f"not in {hooks.SCREENSHOTS.relative_to(ROOT)}: {', '.join(lacking)}; run without --last-run",
              file=sys.stderr)
        return 1
    heavy = []
    for name in names:
        size = store(hooks.SCREENSHOTS / f"{name}.png", STORED / f"{name}.png")
        print(f"docs/screenshots/{name}.png  {size // 1024} KB")
        if size > MAX_BYTES:
            heavy.append(name)
    for old in sorted(STORED.glob("*.png")):
        if old.stem not in names:
            old.unlink()
            print(f"docs/screenshots/{old.name}: no page names it any more, removed")
    if heavy:
        print(f"over {MAX_BYTES // 1000} KB: {', '.join(heavy)} (take a smaller part of the page)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
