"""Hostile inputs through every entry point (issue 11): each ends in a clear message that
names the limit or the problem, within seconds, and writes nothing.

Entry points: the audit (of a .jsonl sample file and of a released .json file, in process
and as the ``audit`` command), each live check (``rewrite.check_rewrite`` and
``rewrite.check_structure``), the Explore preview (``benchmark.preview.preview``), the results import
(``results.parse_results`` / ``results.read_results``) and the ``score`` command. Every risky
call runs in a forked child with a time limit and an address-space limit, so a regression to
a hang, a segfault or a memory blow-up fails its test instead of taking pytest down.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from structext_core.structext_eval import audit, rewrite
from structext_core.structext_eval import preview as explore_preview
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval.suites import generate_sample
from structext_core.text import limits

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 5.0  # every case ends within this, measured in the child
KILL_AFTER = 60.0  # a child still running then is a hang
EXTRA_MEMORY = 1536 << 20  # address space a child may add to what pytest already maps

# The main task of each format (its solver reads the reference) and the Syntax tasks.
TASK_OF = {"csv": 1, "tree": 5, "json": 8, "yaml": 13, "xml": 18, "markdown": 21, "latex": 24, "org": 27}
SYNTAX_TASK_OF = {"json": 10, "yaml": 15, "xml": 20}


def sample(task_id: int) -> dict:
    return generate_sample(task_id, 2, 1, seed=0, index=0, suite="test")


def isolated(fn, *args, seconds: float = SECONDS):
    """``fn(*args)`` in a forked child; its result. Fails the test on a hang, a crash (a
    segfault included), an exception or a run longer than ``seconds``; the child may map
    EXTRA_MEMORY more than pytest at most."""
    ctx = multiprocessing.get_context("fork")
    reader, writer = ctx.Pipe(duplex=False)

    def child() -> None:
        with open("/proc/self/statm") as fh:
            mapped = int(fh.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (mapped + EXTRA_MEMORY, mapped + EXTRA_MEMORY))
        start = time.perf_counter()
        try:
            outcome = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent as a failure
            outcome = ("raised", f"{type(exc).__name__}: {str(exc)[:2000]}")
        writer.send((outcome, time.perf_counter() - start))
        writer.close()

    proc = ctx.Process(target=child)
    proc.start()
    writer.close()
    try:
        if not reader.poll(KILL_AFTER):
            proc.kill()
            pytest.fail(f"no answer within {KILL_AFTER:.0f} s: the input hangs the entry point")
        try:
            (status, value), took = reader.recv()
        except EOFError:
            proc.join()
            pytest.fail(f"the child died without an answer (exit code {proc.exitcode}): a crash")
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    assert status == "ok", f"an exception escaped instead of a message: {value}"
    assert took < seconds, f"took {took:.1f} s (limit {seconds:.0f} s): {str(value)[:300]}"
    return value


# ---- hostile texts -------------------------------------------------------------------

BILLION_LAUGHS_YAML = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
BILLION_LAUGHS_XML = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n' + "".join(
    f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10))
    + ']>\n<lolz>&lol9;</lolz>')
XXE = '<?xml version="1.0"?>\n<!DOCTYPE A [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<A>&x;</A>'


def with_line_2(language: str, insert: str) -> str:
    lines = sample(TASK_OF[language])["reference"].split("\n")
    return "\n".join([lines[0], insert + lines[1], *lines[2:]])


def absurd(language: str) -> str:
    return "x->y\n" * (limits.MAX_INPUT_CHARS // 5 + 1) if language == "tree" else "a\n" * (limits.MAX_INPUT_CHARS // 2 + 1)


# (case id, format, text maker, fragments the message must hold)
CASES = [
    ("json-deep-arrays", "json", lambda: "[\n" * 200_000 + "]\n" * 200_000, ["MAX_DEPTH", "line 101, column 1"]),
    ("json-deep-objects", "json", lambda: '{"a":\n' * 100_000 + "1" + "\n}" * 100_000,
     ["MAX_DEPTH", "nest more than 100 deep"]),
    ("json-deep-one-line", "json", lambda: "[" * 200_000 + "]" * 200_000, ["MAX_LINE_CHARS", "line 1"]),
    ("json-long-line", "json", lambda: '{"id": "' + "a\\n" * 40_000 + '"}', ["MAX_LINE_CHARS"]),
    ("json-huge-number", "json", lambda: '{"id": ' + "1" * 5000 + "}", ["4300 digits"]),
    ("yaml-deep-flow", "yaml", lambda: "[\n" * 50_000 + "]\n" * 50_000, ["MAX_DEPTH", "line 101"]),
    ("yaml-deep-flow-one-line", "yaml", lambda: "[" * 50_000 + "]" * 50_000, ["MAX_LINE_CHARS"]),
    ("yaml-deep-block-mappings", "yaml", lambda: "".join(" " * i + "a:\n" for i in range(1000)), ["MAX_DEPTH", "line 101"]),
    ("yaml-deep-block-sequences", "yaml", lambda: "".join(" " * i + "-\n" for i in range(1000)), ["MAX_DEPTH", "line 101"]),
    ("yaml-compact-sequences", "yaml", lambda: "- " * 9000 + "x", ["MAX_DEPTH"]),
    ("yaml-billion-laughs", "yaml", lambda: BILLION_LAUGHS_YAML, ["MAX_NODES", "aliases expanded"]),
    ("yaml-many-aliases", "yaml", lambda: "a: &a x\nb: [" + ", ".join(["*a"] * 200) + "]\n",
     ["MAX_YAML_ALIASES", "line 2"]),
    ("xml-deep", "xml", lambda: "<a>\n" * 100_000 + "</a>\n" * 100_000, ["MAX_DEPTH", "line 101"]),
    ("xml-billion-laughs", "xml", lambda: BILLION_LAUGHS_XML, ["declares an entity", "line 3"]),
    ("xml-external-entity", "xml", lambda: XXE, ["declares an entity"]),
    ("xml-many-elements", "xml", lambda: "<r>\n" + "<a/>\n" * 60_000 + "</r>", ["MAX_NODES"]),
    ("tree-cycle", "tree", lambda: "x->y\ny->x", ["cycle (x->y->x)"]),
    ("tree-cycle-beside-a-root", "tree", lambda: "a->b\nx->y\ny->x", ["line 2", "cycle (x->y->x)"]),
    ("tree-self-loop", "tree", lambda: "a->a", ["cycle (a->a)"]),
    ("tree-long-cycle", "tree", lambda: "r->s\n" + "\n".join(f"n{i}->n{(i + 1) % 5000}" for i in range(5000)),
     ["cycle"]),
    ("tree-too-many-edges", "tree", lambda: "\n".join(f"n{i}->n{i + 1}" for i in range(60_000)), ["MAX_NODES"]),
    ("csv-quoted-field", "csv", lambda: 'a,b\n"' + ("x" * 1000 + "\n") * 150 + '",1\n', ["MAX_FIELD_CHARS", "line 2"]),
    ("csv-long-line", "csv", lambda: "a,b\n" + "x" * 140_000 + ",1\n", ["MAX_LINE_CHARS", "line 2"]),
    ("markdown-long-line", "markdown", lambda: "t\n" + "![a](" * 30_000, ["MAX_LINE_CHARS", "line 2"]),
    ("latex-long-line", "latex", lambda: "t\n" + "\\textbf{" * 30_000, ["MAX_LINE_CHARS", "line 2"]),
    ("org-long-line", "org", lambda: "t\n" + "[[" * 30_000, ["MAX_LINE_CHARS", "line 2"]),
]
for _language in TASK_OF:
    CASES += [
        (f"{_language}-nul", _language, lambda lang=_language: with_line_2(lang, "\x00"), ["U+0000", "line 2"]),
        (f"{_language}-escape-code", _language, lambda lang=_language: with_line_2(lang, "\x1b[31m"),
         ["U+001B", "line 2, column 1"]),
        (f"{_language}-lone-surrogate", _language, lambda lang=_language: with_line_2(lang, "\ud800"),
         ["lone surrogate", "line 2"]),
        (f"{_language}-absurd-size", _language, lambda lang=_language: absurd(lang), ["MAX_INPUT_CHARS"]),
    ]
CASE_IDS = [c[0] for c in CASES]
# A cycle is drawn as it is by the preview (it never walks the tree).
PREVIEW_CASES = [c for c in CASES if c[0] not in ("tree-cycle", "tree-cycle-beside-a-root", "tree-self-loop",
                                                  "tree-long-cycle")]


def assert_names(message: str, fragments: list[str]) -> None:
    assert "Traceback" not in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from: {message[:600]}"


# ---- the live checks, the preview, the solvers -------------------------------------------

def live_check(language: str, text: str) -> str:
    s = sample(TASK_OF[language])
    report = rewrite.check_rewrite(s, text, s["question"], s["answer"])
    assert not report.structure_ok and not report.ok
    return " | ".join(str(p) for p in report.parse + report.structure + report.answer)


def structure_check(language: str, text: str) -> str:
    parse, structure = rewrite.check_structure(language, sample(TASK_OF[language])["reference"], text)
    assert parse, structure
    return " | ".join(str(p) for p in parse)


def preview(language: str, text: str) -> str:
    shown = explore_preview.preview(language, text)
    assert shown.kind == "none", shown.kind
    return shown.note


def solve(task_id: int, text: str) -> str:
    verdict = audit.audit_sample(dict(sample(task_id), reference=text), "case")
    assert verdict.status == audit.UNSUPPORTED, verdict
    return verdict.reason


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_live_check_names_the_problem(case):
    _, language, make, fragments = case
    assert_names(isolated(live_check, language, make()), fragments)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_structure_check_names_the_problem(case):
    _, language, make, fragments = case
    assert_names(isolated(structure_check, language, make()), fragments)


@pytest.mark.parametrize("case", PREVIEW_CASES, ids=[c[0] for c in PREVIEW_CASES])
def test_preview_names_the_problem(case):
    _, language, make, fragments = case
    assert_names(isolated(preview, language, make()), fragments)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_solver_names_the_problem(case):
    _, language, make, fragments = case
    assert_names(isolated(solve, TASK_OF[language], make()), fragments)


SYNTAX_CASES = [c for c in CASES if c[1] in SYNTAX_TASK_OF and "huge-number" not in c[0]]


@pytest.mark.parametrize("case", SYNTAX_CASES, ids=[c[0] for c in SYNTAX_CASES])
def test_syntax_task_refuses_rather_than_answers(case):
    """'Is there a structural error?' is never answered True for a text we refused to parse."""
    _, language, make, fragments = case
    assert_names(isolated(solve, SYNTAX_TASK_OF[language], make()), fragments)


def test_a_question_beyond_the_limit_is_refused_by_the_check_and_the_solver():
    s = sample(6)
    question = s["question"].replace("?", " " * 5000 + "?")
    report = isolated(lambda: [str(p) for p in rewrite.check_rewrite(s, s["reference"], question, s["answer"]).answer])
    assert_names(" | ".join(report), ["question", "MAX_QUESTION_CHARS"])
    reason = isolated(lambda: audit.audit_sample(dict(s, question=question), "case").reason)
    assert_names(reason, ["MAX_QUESTION_CHARS"])


def test_an_answer_beyond_the_limit_is_refused_by_the_check():
    s = sample(8)
    answer = "x" * (limits.MAX_INPUT_CHARS + 1)
    problems = isolated(lambda: [str(p) for p in rewrite.check_rewrite(s, s["reference"], s["question"], answer).answer])
    assert_names(" | ".join(problems), ["answer", "MAX_INPUT_CHARS"])


LINEAR = 30.0  # seconds: far above linear, far below quadratic on 40,000 nodes


def test_a_long_chain_is_checked_in_linear_time():
    """A tree 40,000 edges deep (within the limits) is not refused, and neither its check nor
    its solvers walk from every node to the root (the check did: quadratic). A walk to the root from
    each of 40,000 nodes is 800 million steps, minutes of Python; linear is under a second, so a
    30 s bound tells them apart even on a machine busy with the rest of the suite."""
    chain = "\n".join(f"n{i}->n{i + 1}" for i in range(40_000))
    renamed = chain.replace("n", "m")
    assert isolated(lambda: rewrite.check_structure("tree", chain, renamed), seconds=LINEAR) == ([], [])
    height = dict(sample(5), reference=chain, answer="40000")
    assert isolated(lambda: audit.audit_sample(height, "c").status, seconds=LINEAR) == audit.AGREE
    depth = dict(sample(6), reference=chain, question="What is the depth of node n40000?", answer="40000")
    assert isolated(lambda: audit.audit_sample(depth, "c").status, seconds=LINEAR) == audit.AGREE


def test_a_yaml_number_python_cannot_convert_is_a_parse_problem():
    """PyYAML's safe loader turns digits into an int; past 4,300 digits Python refuses."""
    parse, _ = isolated(rewrite.check_structure, "yaml", sample(13)["reference"], "id: " + "1" * 5000)
    assert_names(" | ".join(map(str, parse)), ["does not read as yaml", "4300 digits"])


def test_adversarial_long_lines_within_the_limits_stay_fast():
    """Lines just under MAX_LINE_CHARS made of what the patterns look for (unfinished images,
    bold runs, tags, strings, escapes) cost linear time in every check, preview and solver."""
    units = ["![a](", "![", "**", "\\textbf{", "\\includegraphics{", "[[", '"\\', "a=", "<a ", "x@", "*a "]

    def run_all() -> float:
        worst = 0.0
        for unit in units:
            line = (unit * (limits.MAX_LINE_CHARS // len(unit)))[:limits.MAX_LINE_CHARS]
            for language, task_id in TASK_OF.items():
                s = sample(task_id)
                head, *rest = s["reference"].split("\n")
                text = "\n".join([head, *[line] * 5, *rest])
                start = time.perf_counter()
                rewrite.check_rewrite(s, text, s["question"], line)
                explore_preview.preview(language, text)
                audit.audit_sample(dict(s, reference=text), "case")
                worst = max(worst, time.perf_counter() - start)
        return worst

    worst = isolated(run_all, seconds=120.0)
    assert worst < 2.0, f"one format took {worst:.2f} s on five adversarial lines"


def test_limits_are_raised_by_their_environment_variable():
    code = ("from structext_core.text import limits; from structext_core.structext_eval import rewrite; "
            "print(limits.MAX_DEPTH); "
            "print(rewrite.check_structure('json', '[[1]]', '[' * 150 + ']' * 150)[0])")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "STRUCTEXT_LIMIT_MAX_DEPTH": "400"})
    assert run.returncode == 0, run.stderr
    depth, problems = run.stdout.splitlines()
    assert depth == "400" and "MAX_DEPTH" not in problems
    bad = subprocess.run([sys.executable, "-c", "import structext_core.text.limits"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "STRUCTEXT_LIMIT_MAX_DEPTH": "deep"})
    assert bad.returncode != 0 and "STRUCTEXT_LIMIT_MAX_DEPTH='deep' is not a whole number" in bad.stderr


# ---- files: samples, released files, results -----------------------------------------------

OVER_LONG = limits.MAX_RECORD_CHARS + 1


def sample_line(**change) -> str:
    return json.dumps(dict(sample(8), **change), ensure_ascii=False) + "\n"


# (case id, bytes of a .jsonl sample file, fragments); the problem is on line 2 of the file
JSONL_FILES = [
    ("deep-line", lambda: ("[" * 200_000 + "]" * 200_000 + "\n").encode(), ["MAX_DEPTH"]),
    ("lone-surrogate", lambda: sample_line(answer="\\ud800").replace("\\\\ud800", "\\ud800").encode(),
     ["lone surrogate"]),
    ("over-long-line", lambda: (sample_line(answer="x" * OVER_LONG)).encode(), ["MAX_RECORD_CHARS"]),
    ("huge-number", lambda: ('{"id": ' + "1" * 5000 + "}\n").encode(), ["4300 digits"]),
    ("latin-1", lambda: sample_line(answer="café").encode("latin-1"), ["not UTF-8"]),
    ("utf-16", lambda: sample_line().encode("utf-16"), ["not UTF-8"]),
    ("nul-bytes", lambda: b"\x00" * 64 + b"\n", ["not valid JSON"]),
]
JSONL_IDS = [c[0] for c in JSONL_FILES]
# A file that does not decode is refused whole (its first chunk fails to decode, good line and all).
WRONG_ENCODINGS = ("latin-1", "utf-16")


def released(**change) -> dict:
    content = {"Question": "What is the object with id b?", "Answer": "x", "Reference": '{"id": "b"}',
               "Label": {"typename": "json", "node_number": 1, "n_ary_ratio": 1, "para_len_ratio": 6,
                         "other_label_list": ["TextRetrieval"]}}
    content.update(change)
    return content


# (case id, bytes of a released .json file, fragments)
RELEASED_FILES = [
    ("deep", lambda: ('{"Question": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(), ["MAX_DEPTH"]),
    ("lone-surrogate", lambda: json.dumps(released(Answer="\udfff")).encode(), ["lone surrogate"]),
    ("over-long", lambda: json.dumps(released(Answer="x" * OVER_LONG)).encode(), ["MAX_RECORD_CHARS"]),
    ("latin-1", lambda: json.dumps(released(Answer="café"), ensure_ascii=False).encode("latin-1"), ["not UTF-8"]),
    ("utf-16", lambda: json.dumps(released()).encode("utf-16"), ["not UTF-8"]),
    ("deep-reference", lambda: json.dumps(released(Reference="[\n" * 1000 + "]\n" * 1000)).encode(), ["MAX_DEPTH"]),
    ("huge-depth-label", lambda: json.dumps(released(
        Label={"typename": "markdown", "node_number": 10**9, "n_ary_ratio": 10**9, "other_label_list": ["PathWalk"]},
        Question="What is the content of 1st section?", Reference="r\n# s\nx")).encode(), ["agree"]),
    ("label-not-a-list", lambda: json.dumps(released(
        Label={"typename": "json", "other_label_list": 5})).encode(), ["json"]),
]
RELEASED_IDS = [c[0] for c in RELEASED_FILES]


def audit_reasons(path: str) -> str:
    summary = audit.audit([path])
    return " | ".join(f"{v.source} {v.status}: {v.reason}" for v in summary.verdicts)


def good_first(make):
    """A file whose first line is a good sample and whose second line is ``make()``."""
    return sample_line().encode() + make()


@pytest.mark.parametrize("case", JSONL_FILES, ids=JSONL_IDS)
def test_audit_of_a_hostile_sample_file_names_the_problem(case, tmp_path):
    name, make, fragments = case
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(good_first(make))
    reasons = isolated(audit_reasons, str(path))
    if name in WRONG_ENCODINGS:
        assert reasons.startswith(f"{path} unsupported: not UTF-8 text (")
        return
    good, _, bad = reasons.partition(" | ")
    assert good == f"{path}:1 agree: "
    assert_names(bad, [f"{path}:2 unsupported: ", *fragments])


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_audit_of_a_sample_file_with_a_hostile_reference_names_the_problem(case, tmp_path):
    _, language, make, fragments = case
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(dict(sample(TASK_OF[language]), reference=make())) + "\n", encoding="utf-8",
                    errors="surrogatepass")
    reasons = isolated(audit_reasons, str(path))
    assert f"{path}:1 unsupported: " in reasons
    fragments = ["lone surrogate"] if "surrogate" in case[0] else fragments
    assert_names(reasons, fragments)


@pytest.mark.parametrize("case", RELEASED_FILES, ids=RELEASED_IDS)
def test_audit_of_a_hostile_released_file_names_the_problem(case, tmp_path):
    _, make, fragments = case
    path = tmp_path / "0Shotbenchmark" / "json" / "TextRetrieval" / "0.x_0.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(make())
    assert_names(isolated(audit_reasons, str(path)), fragments)


def result_line(**change) -> str:
    return json.dumps({"sample_id": sample(8)["id"], "model": "m", "prompt": "naive", "response": "r", **change},
                      ensure_ascii=False)


# (case id, lines of a results file, fragments)
RESULT_LINES = [
    ("deep-line", lambda: ["[" * 200_000 + "]" * 200_000], [":1:", "MAX_DEPTH"]),
    ("deep-value", lambda: [result_line(response=None)[:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}"],
     [":1:", "MAX_DEPTH"]),
    ("lone-surrogate", lambda: [result_line(response="\\ud800").replace("\\\\ud800", "\\ud800")],
     [":1:", "lone surrogate"]),
    ("lone-surrogate-in-a-key", lambda: [result_line()[:-1] + ', "\\udc80": 1}'], [":1:", "lone surrogate"]),
    ("over-long-line", lambda: [result_line(response="x" * OVER_LONG)], [":1:", "MAX_RECORD_CHARS"]),
    ("huge-number", lambda: ['{"sample_id": ' + "1" * 5000 + "}"], [":1:", "4300 digits"]),
]
RESULT_IDS = [c[0] for c in RESULT_LINES]


def import_lines(lines: list[str]) -> str:
    try:
        results.parse_results(lines, [sample(8)], source="up.jsonl")
    except results.ResultsImportError as exc:
        return str(exc)
    raise AssertionError("a hostile results file was imported")


def import_file(path: str) -> str:
    try:
        results.read_results(path, [sample(8)])
    except results.ResultsImportError as exc:
        return str(exc)
    raise AssertionError("a hostile results file was imported")


@pytest.mark.parametrize("case", RESULT_LINES, ids=RESULT_IDS)
def test_results_import_of_hostile_lines_names_the_problem(case):
    _, make, fragments = case
    assert_names(isolated(import_lines, make()), fragments)


@pytest.mark.parametrize("case", RESULT_LINES, ids=RESULT_IDS)
def test_results_import_of_a_hostile_file_names_the_problem(case, tmp_path):
    _, make, fragments = case
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(make()) + "\n", encoding="utf-8", errors="surrogatepass")
    assert_names(isolated(import_file, str(path)), fragments)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_results_import_of_a_file_in_another_encoding_names_it(encoding, tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(result_line(response="café").encode(encoding))
    assert_names(isolated(import_file, str(path)), ["not UTF-8"])


# ---- the command line: audit and score as processes ----------------------------------------

def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "structext_core", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=KILL_AFTER * 2)


def test_audit_command_on_every_hostile_file_reports_each_and_goes_on(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name, make, _ in JSONL_FILES:
        (folder / f"{name}.jsonl").write_bytes(good_first(make))
    references = folder / "references.jsonl"
    with open(references, "w", encoding="utf-8", errors="surrogatepass") as fh:
        for _, language, make, _ in CASES:
            fh.write(json.dumps(dict(sample(TASK_OF[language]), reference=make())) + "\n")
    for name, make, _ in RELEASED_FILES[:5]:
        path = folder / "0Shotbenchmark" / "json" / "TextRetrieval" / f"{name}.x_0.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(make())
    report = tmp_path / "report.jsonl"
    start = time.perf_counter()
    run = run_cli("audit", str(folder), "--report", str(report))
    assert time.perf_counter() - start < 120
    assert "Traceback" not in run.stdout + run.stderr, run.stderr[-2000:]
    n = len(JSONL_FILES) + len(CASES) + 5
    good = len(JSONL_FILES) - len(WRONG_ENCODINGS)
    assert run.returncode == 1
    assert run.stdout.splitlines()[-1] == f"audited {n + good} samples: {good} agree, 0 disagree, {n} unsupported"
    verdicts = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(verdicts) == n + good
    by_source = {v["source"]: v["reason"] for v in verdicts}
    for number, (name, _, _, fragments) in enumerate(CASES, 1):
        reason = by_source[f"{references}:{number}"]
        expected = ["lone surrogate"] if "surrogate" in name else fragments
        for fragment in expected:
            assert fragment in reason, (name, reason)
    for name, _, fragments in JSONL_FILES:
        reasons = " ".join(r for s, r in by_source.items() if f"{name}.jsonl" in s)
        for fragment in fragments:
            assert fragment in reasons, (name, reasons)


@pytest.mark.parametrize("case", RESULT_LINES, ids=RESULT_IDS)
def test_score_command_on_a_hostile_results_file_writes_nothing(case, tmp_path):
    _, make, fragments = case
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(sample(8)) + "\n")
    hostile = tmp_path / "results.jsonl"
    hostile.write_text("\n".join(make()) + "\n", encoding="utf-8", errors="surrogatepass")
    out = tmp_path / "scored.jsonl"
    run = run_cli("score", str(hostile), "--samples", str(samples), "--out", str(out), "--n-boot", "10")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert_names(run.stderr, fragments)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl", "samples.jsonl"]


@pytest.mark.parametrize("case", JSONL_FILES, ids=JSONL_IDS)
def test_score_command_on_a_hostile_samples_file_writes_nothing(case, tmp_path):
    name, make, fragments = case
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(good_first(make))
    good = tmp_path / "results.jsonl"
    good.write_text(result_line() + "\n")
    out = tmp_path / "scored.jsonl"
    run = run_cli("score", str(good), "--samples", str(samples), "--out", str(out))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    where = [] if name in WRONG_ENCODINGS else [f"{samples}, line 2"]
    assert_names(run.stderr, [*where, *fragments])
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl", "samples.jsonl"]


# ---- the command line: generate with absurd sizes (helper H3) ---------------------------------

GENERATE_CASES = [
    ("depth-range-of-a-billion", ["--depth", "1-1000000000"], ["1,000,000,000 values", "at most 1,000"]),
    ("depth-100000", ["--depth", "100000"], ["60,000 nodes per document", "--allow-large"]),
    ("per-task-a-billion", ["--per-task", "1000000000"], ["10,000 samples per task", "--allow-large"]),
    ("per-task-a-billion-allowed", ["--per-task", "1000000000", "--allow-large"], ["GB of disk space"]),
    ("csv-rows-100-million", ["--csv-rows", "100000000"], ["100,000 rows per table", "--allow-large"]),
    ("csv-rows-allowed", ["--csv-rows", "1000000000000", "--tasks", "1", "--allow-large"], ["of memory"]),
    ("width-range-1000", ["--width", "1-1000", "--per-task", "10000", "--tasks", "1"],
     ["1,000,000 samples", "--allow-large"]),
    ("col-huge", ["--col", "999999999"], ["limit of 50", "--allow-large"]),
    ("per-task-0", ["--per-task", "0"], ["at least 1, got 0"]),
    ("csv-rows-0", ["--csv-rows", "0"], ["at least 1, got 0"]),
    ("jobs-a-million", ["--jobs", "1000000"], ["--jobs must be between 0"]),
    ("out-is-a-folder", ["--out", "."], ["is a folder"]),
]


@pytest.mark.parametrize("case", GENERATE_CASES, ids=[c[0] for c in GENERATE_CASES])
def test_generate_command_with_absurd_sizes_is_refused_at_once_and_writes_nothing(case, tmp_path):
    _, args, fragments = case
    out = ["--out", "x.jsonl"] if "--out" not in args else []
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "structext_core", "generate", "--suite", "custom", *args, *out],
                         cwd=tmp_path, capture_output=True, text=True, timeout=KILL_AFTER,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.perf_counter() - start
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert_names(run.stderr, fragments)
    assert seconds < 2 * SECONDS  # the process's start included
    assert list(tmp_path.iterdir()) == []


def test_read_record_lines_bounds_each_line_and_numbers_on():
    """The one bounded line reader (results import, samples, audit, lm-eval logs): a line
    beyond the limit comes as None without being held, the numbering carries on after it,
    and a caller that stops there reads no further."""
    import io

    text = "short\n" + "x" * 50 + "\n" + "y" * 10 + "\n" + "z" * 500
    assert list(limits.read_record_lines(io.StringIO(text), 10)) == [(1, "short\n"), (2, None), (3, "y" * 10 + "\n"),
                                                                     (4, None)]
    handle = io.StringIO("a\n" + "b" * 5_000_000 + "\nc\n")
    lines = limits.read_record_lines(handle, 100)
    assert next(lines) == (1, "a\n") and next(lines) == (2, None)
    assert handle.tell() <= 2 + 101  # the rest of the long line is skipped only when reading on
    assert list(lines) == [(3, "c\n")]
