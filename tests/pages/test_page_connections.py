"""No page run keeps a database connection after it ends: page loads, clicks and fragment runs
leave no open file on the database (counted in /proc/self/fd, without a garbage collection)."""

import os
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import settings, ui
from structext_core.aibench import config as aibench_config
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import access, accounts, storage
from tests.pages.answer_boxes import answer_box, press

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
PAGES = ROOT / "pages"
LOADS = 12

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc/self/fd")


def open_files_on(path: Path) -> int:
    """Open file descriptors of this process on the database file or its WAL/shared memory."""
    names = {str(path), f"{path}-wal", f"{path}-shm"}
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") in names:
                count += 1
        except OSError:  # closed while listing
            continue
    return count


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Path:
    """The module's suites, AIBench and results folders: Home makes the default suites there
    once for the module (never in the checkout's annotations/, which other test workers share)."""
    return tmp_path_factory.mktemp("folders")


@pytest.fixture
def setup(tmp_path, monkeypatch, folders):
    path = tmp_path / "structext.db"
    monkeypatch.setenv("STRUCTEXT_DB", str(path))
    monkeypatch.setenv(settings.DATA_DIR_ENV, str(folders / "suites"))
    monkeypatch.setenv(aibench_config.DIR_ENV, str(folders / "aibench"))
    monkeypatch.setenv(settings.RESULTS_DIR_ENV, str(folders / "results"))
    db = storage.open_db()
    ann = accounts.create_user(db, "ann1", "password-123", "annotator")
    lead = accounts.create_user(db, "lead", "password-123", "admin")
    samples = [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i)
               for task_id in range(1, 5) for i in range(2)]
    structext_study.create_study(db, name="pilot", suite="test-hard", samples=samples, n_items=6,
                       annotator_ids=[ann["id"]])
    db.conn.close()
    return path, ann, lead


def no_connection_left(path: Path, baseline: int) -> None:
    """Runs over: none holds a connection, and not one file is open on the database beyond the
    baseline."""
    assert ui.open_run_connections() == 0
    assert open_files_on(path) == baseline


def test_page_loads_and_clicks_of_the_answering_page_leave_no_connection_open(setup):
    path, ann, _ = setup
    baseline = open_files_on(path)
    at = AppTest.from_file(str(PAGES / "human_baseline.py"), default_timeout=30)
    at.session_state["user"] = ann
    at.run()
    [start] = [b for b in at.button if b.label == "I have read the rule: start"]
    at = start.click().run()
    for n in range(LOADS):
        answer_box(at).input(f"answer {n}")
        at = press(at, "Pause")
        [resume] = [b for b in at.button if b.label == "Resume"]
        at = resume.click().run()
        assert not at.exception
    at.run()
    # A page run alone (no app.py around it) leaves its connection to the next run of any
    # thread, which takes back those of ended threads first.
    ui.reap_ended_runs()
    no_connection_left(path, baseline)


@pytest.mark.parametrize("page", [page.key for page in access.PAGES])  # every page of the table, new ones too
def test_every_page_run_through_the_app_closes_its_connection(setup, page):
    path, ann, lead = setup
    baseline = open_files_on(path)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["user"] = ann if access.page(page).section == "Annotate" else lead
    at.run()
    at.switch_page(str(PAGES / access.page(page).file))  # a benchmark's page: its full path
    for _ in range(LOADS // 3):
        at.run()
        assert not at.exception
    no_connection_left(path, baseline)


def widget_records(at: AppTest) -> tuple[int, int]:
    """(widget records the session keeps, page runs whose globals their callbacks keep alive).

    A callback defined in an imported module (``structext_core/ui/...``) keeps that module's
    namespace, made once per process, not a page run's: only the globals of a page's script run
    are counted."""
    metadata = at.session_state._state._state._new_widget_state.widget_metadata
    runs = {id(m.callback.__globals__) for m in metadata.values()
            if hasattr(m.callback, "__globals__") and not _module_namespace(m.callback.__globals__)}
    return len(metadata), len(runs)


def _module_namespace(namespace: dict) -> bool:
    """Whether ``namespace`` is the namespace of an imported module (not a page's script run)."""
    module = sys.modules.get(namespace.get("__name__", ""))
    return module is not None and module.__dict__ is namespace


def test_a_session_keeps_no_record_of_the_widgets_of_questions_it_answered(setup):
    path, ann, _ = setup
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["user"] = ann
    at.run()
    at.switch_page("pages/human_baseline.py")
    at.run()
    [start] = [b for b in at.button if b.label == "I have read the rule: start"]
    at = start.click().run()
    counts = []
    for n in range(5):
        answer_box(at).input(f"answer {n}")
        at = press(at, "Submit answer")
        assert not at.exception
        counts.append(widget_records(at))
    # Each question draws its own widgets; those of answered questions are not kept, nor the
    # globals (question, reference, connection) of the runs that drew them.
    assert counts[-1][0] <= counts[0][0], counts
    assert counts[-1][1] <= min(counts[0][1], 3), counts


def test_pages_make_fragments_with_ui_fragment():
    """A fragment's own run ends without app.py: ui.fragment closes its connection then."""
    offenders = [path.name for path in PAGES.glob("*.py") if "st.fragment" in path.read_text(encoding="utf-8")]
    assert offenders == []
