"""A lab's set brought from the page, end to end in Chromium (issue 44, item 2).

The lead uploads a GPQA-style CSV (12 questions: Question, Correct Answer, Incorrect Answer 1..3, and
the metadata fields Subject and Difficulty) on Study admin's "Bring a set", reads the check's report
(counts by format, the strata, the layout, the first three questions as an annotator will see them),
imports it under a name of their own, and opens a study of all 12 questions for one annotator from
the form below. The annotator answers every question by keyboard (a letter, then Enter), wrong on
purpose on the Physics ones. On Results the lead adds a model's answers (a JSON-lines file) and reads
people beside the model, broken down by stratum (Subject), then by two metadata fields at once (Subject x
Difficulty). Screenshots:
tests/screenshots/labset-upload-*.png.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.browser.test_human_journey import choose, go_to, log_in, sidebar
from tests.browser.test_results_views import no_exception
from tests.labset.test_upload import GPQA_HEADER, LEVELS, SUBJECTS, csv_bytes

pytestmark = pytest.mark.browser

ANNOTATOR, PASSWORD = "gpqa-ann", "annotator-password-1"
STUDY_NAME, SET_NAME, N_ITEMS = "gpqa-pilot", "gpqa-lab.csv", 12
MODEL = "oracle-model"
QUESTIONS = [f"At what temperature does sample {i} of the {SUBJECTS[i % 3].lower()} series change phase?"
             for i in range(N_ITEMS)]
SUBJECT_OF = {QUESTIONS[i]: SUBJECTS[i % 3] for i in range(N_ITEMS)}
ROWS = [[QUESTIONS[i], f"{300 + 7 * i} K", f"{200 + 3 * i} K", f"{400 + 5 * i} K", f"{500 + 11 * i} K",
         SUBJECTS[i % 3], LEVELS[i % 2]] for i in range(N_ITEMS)]


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """One annotator; the set only on the lead's disk (a file to upload), and a model's answers to it."""
    from structext_core.studio import accounts, storage
    db = storage.open_db(app_env["db_path"])
    app_env["ann_id"] = accounts.create_user(db, ANNOTATOR, PASSWORD, "annotator")["id"]
    desk = tmp_path_factory.mktemp("desk")
    app_env["set_file"] = desk / "gpqa-diamond-sample.csv"
    app_env["set_file"].write_bytes(csv_bytes(GPQA_HEADER, ROWS))
    return app_env


def _current(db, user_id) -> dict:
    row = db.execute("SELECT i.sample_json FROM assignments a JOIN study_items i ON i.id = a.item_id"
                     " LEFT JOIN responses r ON r.assignment_id = a.id WHERE a.user_id = ? AND r.id IS NULL"
                     " ORDER BY a.seq LIMIT 1", [user_id]).fetchone()
    return json.loads(row[0])


def _log_out(page) -> None:
    sidebar(page).get_by_role("link", name="Log out").click()
    sidebar(page).get_by_role("button", name="Log in").wait_for()


def lead_brings_the_set(page, base, app_env, wait_for_app, screenshot) -> None:
    log_in(page, base, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to(page, "Studies", wait_for_app)
    page.get_by_role("tab", name="Set up a study").click()
    page.get_by_role("radio", name="The lab's own (multiple choice and short answers)").check()  # a light chooser
    page.get_by_placeholder("e.g. hard-500-spring").wait_for(state="detached")
    wait_for_app(page)
    bring = page.get_by_test_id("stExpander").filter(has_text="Bring a set")
    page.get_by_text("No set yet: bring one above").wait_for()
    bring.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(app_env["set_file"]))
    bring.get_by_test_id("stFileChipName").wait_for()
    wait_for_app(page)
    strata = bring.get_by_role("textbox", name="Metadata field of the strata")
    strata.fill("Subject")
    strata.press("Enter")
    wait_for_app(page)
    bring.get_by_role("button", name="Check", exact=True).click()
    page.get_by_text("gpqa-diamond-sample.csv can be imported: 12 questions.").wait_for()
    wait_for_app(page)
    no_exception(page)
    bring.get_by_test_id("sxFigure").first.wait_for()
    # (a figure is drawn in an element of its own, whose text the box's inner text leaves out)
    assert bring.get_by_test_id("sxFigure").filter(has_text="Multiple choice").inner_text().split() == [
        "Multiple", "choice", "12"]
    report = bring.inner_text()
    assert "Strata (Subject): Biology 4 · Chemistry 4 · Physics 4" in report
    assert "Layout recognised: gpqa (question Question; options Correct Answer, Incorrect Answer 1," in report
    for question in QUESTIONS[:3]:
        assert question in report
    assert QUESTIONS[3] not in report  # the first three only
    page.get_by_text("The first 3 questions, as an annotator will see them").scroll_into_view_if_needed()
    screenshot(page, "labset-upload-1-report")
    name = bring.get_by_role("textbox", name="Import as")
    name.fill(SET_NAME)
    name.press("Enter")
    wait_for_app(page)
    bring.get_by_role("button", name="Import", exact=True).click()
    done = page.get_by_text(f"Imported '{SET_NAME}': 12 questions.")
    done.wait_for()
    wait_for_app(page)
    no_exception(page)
    done.scroll_into_view_if_needed()
    screenshot(page, "labset-upload-2-imported")


def lead_opens_the_study(page, wait_for_app, screenshot) -> None:
    # the study's form: one light element (light_form), the browser's own fields
    form = page.locator("form.sxf").filter(has=page.get_by_text("Metadata field of the strata"))
    assert page.get_by_label("Set", exact=True).input_value() == SET_NAME  # the set just brought
    assert form.get_by_label("Metadata field of the strata").input_value() == "Subject"  # as it was checked
    form.get_by_placeholder("e.g. lab-set-pilot").fill(STUDY_NAME)
    form.get_by_label("Number of questions").fill(str(N_ITEMS))
    form.get_by_role("checkbox", name=ANNOTATOR, exact=True).check()
    form.scroll_into_view_if_needed()
    screenshot(page, "labset-upload-3-form")
    form.get_by_role("button", name="Create study").click()
    page.get_by_text(re.compile(rf"Study '{STUDY_NAME}' \(Lab set .+\) created for 1 annotator: each answers")).wait_for()
    wait_for_app(page)
    no_exception(page)
    _log_out(page)


def annotator_answers(page, base, db, uid, wait_for_app, screenshot) -> list[tuple[dict, str]]:
    """Every question by keyboard: the key's letter, but a wrong letter on the Physics questions."""
    log_in(page, base, ANNOTATOR, PASSWORD, wait_for_app)
    go_to(page, "Human baseline", wait_for_app)
    page.get_by_role("button", name="I have read the rule: start").click()
    given = []
    for n in range(1, N_ITEMS + 1):
        page.get_by_text(f"Question {n} of {N_ITEMS}").wait_for()
        wait_for_app(page)
        item = _current(db, uid)
        no_exception(page)
        assert page.get_by_text(item["question"]).count() >= 1  # (a typed answer's question: in its element's shadow root)
        letter = item["answer"] if SUBJECT_OF[item["question"]] != "Physics" else "ABCD".replace(item["answer"], "")[0]
        page.get_by_role("heading", name="Human baseline").click()  # the page has the focus, not a field
        page.keyboard.press(letter.lower())
        page.get_by_role("button", name=f"Submit {letter}").wait_for()
        wait_for_app(page)
        if n == 1:
            screenshot(page, "labset-upload-4-question")
        page.keyboard.press("Enter")
        given.append((item, letter))
        page.get_by_text(f"Question {n + 1} of {N_ITEMS}").or_(page.get_by_text("You have answered all")).wait_for()
    wait_for_app(page)
    _log_out(page)
    return given


def lead_reads_results(page, base, app_env, tmp_path, wait_for_app, screenshot) -> None:
    from structext_core.labset.dataset import load_set
    log_in(page, base, app_env["admin_user"], app_env["admin_password"], wait_for_app)
    go_to(page, "Results", wait_for_app)
    choose(page, "Benchmark", "The lab's own")
    wait_for_app(page)
    page.get_by_role("heading", name="The lab's own: people beside models").wait_for()
    no_exception(page)
    # a model's answers, from the lead's disk, checked against the set's items and kept with it
    items = load_set(app_env["data_dir"] / "labsets" / SET_NAME, strata_key="Subject")
    answers = tmp_path / "oracle.jsonl"
    answers.write_text("".join(json.dumps({"id": i["source_id"], "model": MODEL, "answer": i["target"][0]}) + "\n"
                               for i in items), encoding="utf-8")
    page.get_by_text("Add models' answers").click()
    adder = page.get_by_test_id("stExpander").filter(has_text="Add models' answers")
    adder.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(answers))
    adder.get_by_test_id("stFileChipName").wait_for()
    wait_for_app(page)
    adder.get_by_role("button", name="Check and keep").click()
    page.get_by_text(f"Kept oracle.jsonl with {SET_NAME}").wait_for()
    wait_for_app(page)
    no_exception(page)
    page.get_by_text("Models' answers from oracle.jsonl").wait_for()
    screenshot(page, "labset-upload-5-results-overall")
    figures = {"Biology": ("human", 100.0), "Chemistry": ("human", 100.0), "Physics": ("human", 0.0)}
    page.get_by_test_id("stButtonGroup").get_by_text("Stratum", exact=True).click()
    wait_for_app(page)
    labels = page.wait_for_function("""() => {
      const labels = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"] [aria-roledescription="bar"]'),
                                e => e.getAttribute("aria-label") || "");
      return labels.some(l => l.startsWith("stratum: Physics")) && labels;
    }""").json_value()
    bars = [dict(part.split(": ", 1) for part in label.split("; ")) for label in labels]
    for stratum, (who, figure) in figures.items():
        mine = [b["accuracy (%)"] for b in bars if b.get("stratum") == stratum and b.get("model") == who]
        assert len(mine) == 1 and abs(float(mine[0]) - figure) < 0.06, (stratum, mine, labels)
    # the model on the same strata as the people (the strata field chosen at the check is kept with the set)
    assert {b.get("stratum"): b["accuracy (%)"] for b in bars if b.get("model") == MODEL} == {
        s: "100" for s in SUBJECTS}, labels
    page.get_by_test_id("stVegaLiteChart").first.scroll_into_view_if_needed()
    wait_for_app(page)
    screenshot(page, "labset-upload-6-results-by-stratum")
    # two metadata fields at once: Subject x Difficulty, people and the model in each cell
    pair = page.get_by_test_id("stMultiSelect").filter(has_text="Two fields together")
    for field in ("Subject", "Difficulty"):  # typed and taken with Enter, as a person using the keyboard does
        pair.locator("input").click()
        pair.locator("input").press_sequentially(field)
        page.get_by_role("option", name=field, exact=True).wait_for()
        pair.locator("input").press("Enter")
        wait_for_app(page)
    page.keyboard.press("Escape")
    labels = page.wait_for_function("""() => {
      const labels = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"] [aria-roledescription="bar"]'),
                                e => e.getAttribute("aria-label") || "");
      return labels.some(l => l.startsWith("Subject x Difficulty: ")) && labels;
    }""").json_value()
    no_exception(page)
    cells = {dict(part.split(": ", 1) for part in label.split("; "))["Subject x Difficulty"] for label in labels}
    assert cells and all(" · " in cell and cell.split(" · ")[0] in SUBJECTS for cell in cells), labels
    page.get_by_test_id("stVegaLiteChart").first.scroll_into_view_if_needed()
    screenshot(page, "labset-upload-7-results-subject-by-difficulty")


def test_a_set_brought_from_the_page_to_people_beside_a_model(page, app_server, app_env, wait_for_app, screenshot,
                                                             tmp_path):
    from structext_core.studio import storage

    db = storage.open_db(app_env["db_path"])
    lead_brings_the_set(page, app_server, app_env, wait_for_app, screenshot)
    lead_opens_the_study(page, wait_for_app, screenshot)
    (study_id, benchmark, suite), = db.execute("SELECT id, benchmark, suite FROM studies WHERE name = ?",
                                               [STUDY_NAME]).fetchall()
    assert (benchmark, suite) == ("labset", SET_NAME)
    given = annotator_answers(page, app_server, db, app_env["ann_id"], wait_for_app, screenshot)
    assert len(given) == N_ITEMS and {SUBJECT_OF[item["question"]] for item, _ in given} == set(SUBJECTS)
    rows = db.execute("SELECT r.response, r.exact_match FROM responses r WHERE r.study_id = ? ORDER BY r.id",
                      [study_id]).fetchall()
    assert [tuple(r) for r in rows] == [(letter, int(SUBJECT_OF[item["question"]] != "Physics")) for item, letter in given]
    lead_reads_results(page, app_server, app_env, tmp_path, wait_for_app, screenshot)
