""""Bring a set" on the lab's study setup (Study admin, Set up a study, The lab's own): a set uploaded,
checked by the code ``labset check`` runs, its report read, then imported into the sets folder by the
code ``labset import`` runs (:mod:`structext_core.labset.upload`). UI only: the checks, the copy and
every message come from the core. Admins only (the ``load_data`` capability, on an admin-only page).
"""

from __future__ import annotations

import json
import math

import streamlit as st

from structext_core.evaluation.choices import LETTERS
from structext_core.labset import cli, dataset, upload
from structext_core.studio import access
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import plural
from structext_core.ui import widgets
from structext_core.ui.question_screen.choice_answer import option_label
from structext_core.ui.question_screen.common import ANSWER_LABEL, ANSWER_PLACEHOLDER

#: The page's keys: the check kept for the upload and options it was made on, the set just imported.
CHECKED, IMPORTED = "lab_up_checked", "lab_up_imported"
PREVIEWED = 3


def _options_signature(upload_file, rule: str, strata: str, mapping_text: str, seed) -> tuple:
    return (upload_file.file_id, upload_file.name, upload_file.size, rule, strata, mapping_text, seed)


def bring_set_section(db, user: dict, expanded: bool) -> None:
    """The expander: upload, then (a file chosen) the check's options, **Check**, the report, then **Import**
    under a name."""
    if not access.can(access.role_of(user), "load_data", access.public_mode(db)):
        return
    with st.expander("Bring a set", expanded=expanded, icon=":material/upload_file:"):
        st.caption(f"Upload a question set (at most {upload.MAX_BYTES // 1_000_000} MB): it is checked exactly as "
                   "`labset check` checks it, and imported into the sets folder as `labset import` does. A "
                   "datasets folder (save_to_disk), or a set whose questions name images, cannot be uploaded as "
                   f"one file: bring it on the server with `{upload.COMMAND}`.")
        chosen = st.file_uploader("The set (.jsonl, .json, .csv, .parquet or .arrow)",
                                  type=[s.lstrip(".") for s in upload.SUFFIXES], key="lab_up_file",
                                  max_upload_size=math.ceil(upload.MAX_BYTES / 2**20))
        # The check's options once there is a file to check: the tab's first view is the uploader alone, no
        # other widget's code for the browser to load on the lead's click (issue 46).
        if chosen is None:
            st.session_state.pop(CHECKED, None)
            return
        left, middle, right = st.columns(3)
        # A set the check found no short answer in is asked no rule for them (issue 46): the rule it
        # was checked with is kept, unused.
        checked_rule = _no_short_answer_rule(chosen)
        if checked_rule is None:
            rule = left.selectbox("Short answers are scored", dataset.RULES, key="lab_up_rule",
                                  help="Unless a question's metadata.answer_rule says otherwise (--rule).")
        else:
            rule = checked_rule
            left.caption("No short answer in this set, so no rule to score them by.")
        strata = middle.text_input("Metadata field of the strata", value="subject", key="lab_up_strata",
                                   help="The field whose values are the strata (--strata); else the mapping's "
                                        "first strata field.")
        seed = right.number_input("Seed of the options' order", min_value=0, value=None, step=1, key="lab_up_seed",
                                  placeholder="the mapping's, else 0",
                                  help="GPQA-like sets (a correct answer and incorrect ones): their options are "
                                       "shown in an order drawn from this seed and each question's id (--seed).")
        own_rule = "" if checked_rule is not None else st.text_input(
            "Or a rule of your own", key="lab_up_own_rule", placeholder=r"e.g. pattern(ANSWER: (\w+), match_all=true)")
        mapping_text = st.text_area("Mapping (JSON, optional)", key="lab_up_mapping", height=80,
                                    placeholder='e.g. {"question": "prompt", "options": ["opt1", "opt2", "opt3"], '
                                                '"key": "gold:letter", "strata": ["subject"]}',
                                    help="Which field holds what, when the layout is not recognised (as the "
                                         "--mapping file holds it); the check says which to write.")
        rule = own_rule.strip() or rule
        seed = None if seed is None else int(seed)
        signature = _options_signature(chosen, rule, strata, mapping_text, seed)
        if st.button("Check", key="lab_up_check", type="primary"):
            st.session_state[CHECKED] = (signature, _check(chosen, rule, strata, mapping_text, seed))
            if _no_short_answer_rule(chosen) is not None:
                st.rerun()  # drawn again without the rule for short answers it has none of
        kept = st.session_state.get(CHECKED)
        if kept is None or kept[0] != signature:
            st.caption("Press **Check** to read the set as the app will.")
            return
        outcome = kept[1]
        if isinstance(outcome, upload.UploadRefused):
            _refusal(outcome)
            return
        _report(outcome)
        _import(chosen, outcome, rule, strata, mapping_text, seed)


def _no_short_answer_rule(chosen) -> str | None:
    """The rule the uploaded file was checked with, when that check found no short answer in it
    (no rule to ask for then); None before a check of this file, or when it has short answers."""
    kept = st.session_state.get(CHECKED)
    if chosen is None or kept is None or not isinstance(kept[1], dict):
        return None
    signature, report = kept
    if signature[:3] != (chosen.file_id, chosen.name, chosen.size) or report["formats"]["short answer"]:
        return None
    return signature[3]


def _check(chosen, rule, strata, mapping_text, seed) -> dict | upload.UploadRefused:
    """The check's outcome, kept in the session: what the report shows (never the set's bytes)."""
    try:
        upload.refuse_size(chosen.size, chosen.name)  # before its bytes are read
        options = upload.parse_options(rule, strata, mapping_text, seed)
        with st.spinner("Checking the set…"):
            report = upload.check_bytes(chosen.getvalue(), chosen.name, options)
    except upload.UploadRefused as error:
        return error
    except cli.LabSetCommandError as error:
        return upload.UploadRefused(str(error), error.problems)
    questions = [{"question": i["question"], "choices": list(i["choices"]), "format": i["format"],
                  "stratum": i["stratum"]} for i in report.questions[:PREVIEWED]]
    return {"file_name": report.file_name, "lines": report.lines, "formats": report.formats,
            "strata": report.strata, "layout": report.layout, "questions": questions,
            "count": len(report.read.items), "strata_field": ", ".join(report.strata_fields) or "none given"}


def _refusal(error: upload.UploadRefused) -> None:
    st.error("This set cannot be imported as it is; nothing was written. What the check says:")
    st.code(str(error), language=None, wrap_lines=True)
    if error.mapping is not None:
        st.markdown("**The mapping to write**: check it against the columns found, paste it into **Mapping "
                    "(JSON)** above, then press **Check** again.")
        st.code(json.dumps(error.mapping, ensure_ascii=False), language="json", wrap_lines=True)


def _report(report: dict) -> None:
    formats = report["formats"]
    st.success(markdown_text(f"{report['file_name']} can be imported: {plural(report['count'], 'question')}."))
    widgets.figures([("Multiple choice", f"{formats['multiple choice']:,}"),
                     ("Short answer", f"{formats['short answer']:,}"), ("Strata", f"{len(report['strata']):,}")])
    if report["strata"]:
        shown = " · ".join(f"{value} **{count}**" for value, count in
                           ((markdown_text(v), c) for v, c in report["strata"][:30]))
        more = f" (and {len(report['strata']) - 30} more)" if len(report["strata"]) > 30 else ""
        st.markdown(f"**Strata** ({markdown_text(report['strata_field'])}): {shown}{more}")
    else:
        st.markdown(f"**Strata**: none (no question has a value in the metadata field "
                    f"{markdown_text(report['strata_field'])}; set the field above and check again)")
    st.markdown(f"**Layout recognised**: {markdown_text(report['layout'])}")
    with st.expander("The check's report, as `labset check` prints it"):
        st.code("\n".join(report["lines"]), language=None, wrap_lines=True)
    st.markdown(f"**The first {min(PREVIEWED, report['count'])} questions, as an annotator will see them**")
    for number, question in enumerate(report["questions"], 1):
        _preview(number, question)


def _preview(number: int, question: dict) -> None:
    """A question as the question screen draws it: **Question**, its text, then its lettered options
    (the screen's own option buttons, here doing nothing) or the answer box of a short answer."""
    with st.container(border=True):
        kind = "multiple choice" if question["choices"] else "short answer"
        stratum = f" · stratum {question['stratum']}" if question["stratum"] else ""
        st.caption(markdown_text(f"Question {number} · {kind}{stratum}"))
        st.markdown("**Question**")
        st.text(question["question"])
        for letter, text in zip(LETTERS, question["choices"]):
            st.button(option_label(letter, text), key=f"lab_up_preview_{number}_{letter}", width="stretch",
                      wrap=True, help="As the annotator sees it (here it does nothing)")
        if not question["choices"]:
            st.text_area(ANSWER_LABEL, key=f"lab_up_preview_{number}_answer", disabled=True, height=68,
                         placeholder=ANSWER_PLACEHOLDER)


def _import(chosen, report: dict, rule, strata, mapping_text, seed) -> None:
    st.divider()
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    name = left.text_input("Import as", value=report["file_name"], key="lab_up_name", max_chars=200,
                           help="The set's file name in the sets folder; never over another file. It ends as "
                                "the uploaded file does.")
    if not right.button("Import", key="lab_up_import", type="primary", width="stretch"):
        return
    try:
        upload.refuse_size(chosen.size, chosen.name)
        with st.spinner("Importing the set…"):
            done = upload.import_bytes(chosen.getvalue(), chosen.name,
                                       upload.parse_options(rule, strata, mapping_text, seed), name)
    except cli.LabSetCommandError as error:
        st.error(markdown_text(f"Not imported, nothing written: {str(error)[:3000]}"))
        return
    imported = name.strip() or report["file_name"]
    # the study form below offers the set just imported, read with the same rule and strata field
    st.session_state[IMPORTED] = {"name": imported, "rule": rule, "strata": strata.strip()}
    st.session_state.pop(CHECKED, None)
    st.success(markdown_text(f"Imported {imported!r}: {plural(len(done.read.items), 'question')}. It is the set "
                             "chosen in the form below: name the study and its annotators."))
    with st.expander("What `labset import` says"):
        st.code("\n".join(done.lines), language=None, wrap_lines=True)
