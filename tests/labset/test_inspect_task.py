"""``labset import-task``: a lab's own Inspect task brought as a set (its samples read through the task,
options shuffled as its models saw them), and people scored by the task's own scorer: per item, the
people's score for a reply equals Inspect's own score of the same reply in an eval of the task."""
from __future__ import annotations

import json
import re
import textwrap

import pytest

pytest.importorskip("inspect_ai")

from structext_core.cli.main import main  # noqa: E402
from structext_core.labset import inspect_task, member  # noqa: E402
from structext_core.labset.dataset import load_set  # noqa: E402

#: The lab's own record shapes, read by its record_to_sample (no field named as Inspect's).
MC_RECORDS = [{"qid": f"q{n}", "q": f"Which river flows through city {n}?", "opts": [f"river {n}{x}" for x in "wxyz"],
               "gold": "ABCD"[n % 4], "subj": ("maps", "tides")[n % 2]} for n in range(8)]
SHORT_RECORDS = [{"q": "Capital of France?", "ans": "Paris"}, {"q": "Largest planet?", "ans": ["Jupiter", "Jove"]},
                 {"q": "Author of Hamlet?", "ans": "Shakespeare"}, {"q": "Colour of the sky?", "ans": "blue"},
                 {"q": "Metres in a kilometre?", "ans": "1000"}, {"q": "Half of seven?", "ans": "3.5"}]
LAB = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.scorer import CORRECT, Score, accuracy, choice, match, model_graded_qa, scorer
from inspect_ai.solver import generate, multiple_choice


def mc_sample(record):
    return Sample(input=record["q"], choices=record["opts"], target=record["gold"], id=record["qid"],
                  metadata={"subject": record["subj"]})


def short_sample(record):
    return Sample(input=record["q"], target=record["ans"])  # no id: Inspect numbers them


@task
def lab_mc(seed: int = 0):
    return Task(dataset=json_dataset("mc.jsonl", mc_sample, shuffle_choices=seed), solver=multiple_choice(),
                scorer=choice())


@task
def lab_short(numeric: bool = False):
    return Task(dataset=json_dataset("short.jsonl", short_sample), solver=generate(),
                scorer=match(location="any", numeric=True) if numeric else match())


@task
def lab_graded():
    return Task(dataset=json_dataset("short.jsonl", short_sample), solver=generate(), scorer=model_graded_qa())


@scorer(metrics=[accuracy()])
def lenient():
    async def score(state, target):
        return Score(value=CORRECT)
    return score


@task
def lab_custom():
    return Task(dataset=json_dataset("short.jsonl", short_sample), solver=generate(), scorer=lenient())
'''


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The lab's folder: its task file and the two data files it reads."""
    folder = tmp_path_factory.mktemp("lab")
    (folder / "mc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MC_RECORDS))
    (folder / "short.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SHORT_RECORDS))
    (folder / "lab_tasks.py").write_text(LAB)
    return folder


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["labset", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def mock_eval(lab, spec: str, args: dict, replies: list[str], logs):
    """Inspect's own eval of the lab's task, the mock model giving ``replies`` in turn; its log."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    outputs = []
    for text in replies:
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outputs.append(output)
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    (log,) = inspect_eval(str(lab / spec), task_args=args, model=model, log_dir=str(logs), display="none",
                          max_samples=1)
    assert log.status == "success", log.error
    return log


def people_scores(tmp_path, monkeypatch, folder, name, answer_of) -> tuple[dict, str]:
    """A study over the imported set, one person answering each question by ``answer_of(source_id)``;
    (each item's score in the people's Inspect log by the set's id, the log's scorer name)."""
    from inspect_ai.log import read_eval_log

    from structext_core.labset.study import create_study
    from structext_core.studio import accounts, storage, study
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    items = load_set(folder / name)
    by_question = {item["question"]: item["source_id"] for item in items}
    db = storage.open_db(tmp_path / "db.sqlite")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    study_id, _ = create_study(db, name="pilot", source=name, items=items, n_items=len(items),
                               annotator_ids=[ann["id"]], rule_text="No help.")
    study.accept_rule(db, study_id, ann["id"])
    while (view := study.open_question(db, study_id, ann["id"])) is not None:
        study.submit_answer(db, ann["id"], view.assignment_id, answer_of(by_question[view.question]))
    log = read_eval_log(str(study.write_inspect_log(db, study_id, tmp_path / "people.eval")))
    (scorer,) = {key for sample in log.samples for key in sample.scores}
    return {str(sample.id): sample.scores[scorer].value for sample in log.samples}, scorer


def model_scores(log) -> dict:
    from inspect_ai.scorer import value_to_float
    to_float = value_to_float()
    return {str(sample.id): to_float(next(iter(sample.scores.values())).value) for sample in log.samples}


def test_a_multiple_choice_task_is_brought_as_its_models_saw_it_and_people_score_as_its_scorer(
        lab, tmp_path, monkeypatch, capsys):
    to = tmp_path / "sets"
    code, out, err = run(capsys, "import-task", str(lab / "lab_tasks.py@lab_mc"), "-T", "seed=7", "--to", str(to))
    assert (code, err) == (0, ""), err
    assert "lab_mc.jsonl: imported from the task" in out and "8 questions: 8 multiple choice" in out
    assert "choice() scorer" in out
    items = load_set(to / "lab_mc.jsonl")
    record = json.loads((to / "lab_mc.jsonl.task.json").read_text())
    assert record["scorer"] == {"name": "inspect_ai/choice", "params": {}} and record["args"] == {"seed": 7}
    assert record["rule"] == "choice" and record["solvers"] == ["inspect_ai/multiple_choice"]
    assert len(record["file_sha256"]) == 64 and record["file"].endswith("lab_tasks.py")
    # The mock model's replies, as multiple_choice() asks them ("ANSWER: $LETTER"): some right, some wrong.
    replies = [f"ANSWER: {'ABCD'[(n * 3) % 4]}" for n in range(len(MC_RECORDS))]
    log = mock_eval(lab, "lab_tasks.py@lab_mc", {"seed": 7}, replies, tmp_path / "logs")
    # The set's items are the samples of Inspect's eval: ids, inputs, the shuffled options and their key.
    logged = {str(s.id): s for s in log.samples}
    assert [i["source_id"] for i in items] == [r["qid"] for r in MC_RECORDS] == list(logged)
    for item in items:
        sample = logged[item["source_id"]]
        assert (item["question"], item["choices"], item["target"]) == (sample.input, sample.choices, [sample.target])
    raw = {r["qid"]: r for r in MC_RECORDS}
    assert any(i["choices"] != raw[i["source_id"]]["opts"] for i in items)  # the seed shuffled the options ...
    assert all(i["choices"][ord(i["target"][0]) - 65] == raw[i["source_id"]]["opts"]["ABCD".index(
        raw[i["source_id"]]["gold"])] for i in items)  # ... and the key follows its option
    assert {i["stratum"] for i in items} == {"maps", "tides"}
    # People giving the letters the model gave: per item, the same score as Inspect's choice().
    letter = {str(s.id): re.search(r"ANSWER: ([A-D])", s.output.completion).group(1) for s in log.samples}
    people, scorer = people_scores(tmp_path, monkeypatch, to, "lab_mc.jsonl", letter.get)
    ours = model_scores(log)
    assert people == ours and 0 < sum(ours.values()) < len(ours)
    assert scorer == "choice" == member.INSPECT_SCORER([{"options": ["a", "b"], "answer": "A"}])


@pytest.mark.parametrize("numeric, replies", [
    (False, ["It is Paris.", "jupiter, I think", "Shakespeare wrote it", "Blue", "1,000", "3.5 exactly"]),
    (True, ["paris", "Jove?", "not sure", "the sky is blue", "It is 1,000 metres", "3.50"]),
])
def test_a_short_answer_task_scored_by_match_scores_people_as_inspect_does(lab, tmp_path, monkeypatch, capsys,
                                                                           numeric, replies):
    to = tmp_path / "sets"
    code, out, err = run(capsys, "import-task", str(lab / "lab_tasks.py@lab_short"), "-T", f"numeric={numeric}",
                         "--to", str(to), "--name", "short.jsonl")
    assert (code, err) == (0, ""), err
    rule = ("match(location=any, ignore_case=true, numeric=true)" if numeric
            else "match(location=end, ignore_case=true, numeric=false)")
    items = load_set(to / "short.jsonl")
    assert {i["rule"] for i in items} == {rule} and {i["format"] for i in items} == {"short"}
    assert json.loads((to / "short.jsonl.task.json").read_text())["rule"] == rule
    log = mock_eval(lab, "lab_tasks.py@lab_short", {"numeric": numeric}, replies, tmp_path / "logs")
    logged = {str(s.id): s for s in log.samples}
    assert [i["source_id"] for i in items] == ["1", "2", "3", "4", "5", "6"] == list(logged)  # Inspect's numbering
    for item in items:
        sample = logged[item["source_id"]]
        targets = sample.target if isinstance(sample.target, list) else [sample.target]
        assert (item["question"], item["target"]) == (sample.input, targets)
    reply = {str(s.id): s.output.completion for s in log.samples}
    people, scorer = people_scores(tmp_path, monkeypatch, to, "short.jsonl", reply.get)
    ours = model_scores(log)
    assert people == ours and 0 < sum(ours.values()) < len(ours)
    assert scorer == "match"


def refused(capsys, to, *argv) -> str:
    code, out, err = run(capsys, "import-task", *argv, "--to", str(to))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert not to.exists() or not any(to.iterdir())
    return err


@pytest.mark.parametrize("task, words", [
    ("lab_graded", "inspect_ai/model_graded_qa() is not one of Inspect's scorers the app reproduces"),
    ("lab_custom", "lenient() is not one of Inspect's scorers the app reproduces"),
])
def test_a_scorer_not_reproduced_is_refused_naming_it(lab, tmp_path, capsys, task, words):
    err = refused(capsys, tmp_path / "sets", str(lab / f"lab_tasks.py@{task}"))
    assert words in err and "people could not be scored as its models were" in err


@pytest.mark.parametrize("code, words", [
    ("from inspect_ai import task\nraise RuntimeError('no data here')\n@task\ndef t():\n    pass\n",
     "the task's code raised RuntimeError: no data here"),
    ("from inspect_ai import task\nwhile True:\n    pass\n@task\ndef t():\n    pass\n", "did not load within"),
    ("def helper():\n    return 1\n", "the file holds no @task"),
])
def test_a_task_file_that_raises_loops_or_names_no_task_is_refused(tmp_path, capsys, code, words):
    path = tmp_path / "bad.py"
    path.write_text(code)
    err = refused(capsys, tmp_path / "sets", str(path), "--timeout", "20")
    assert words in err


def test_an_unknown_argument_a_missing_task_and_an_image_are_refused(lab, tmp_path, capsys):
    to = tmp_path / "sets"
    assert "-T shuffle: the task 'lab_mc' takes no such parameter (its parameters: seed)" in refused(
        capsys, to, str(lab / "lab_tasks.py@lab_mc"), "-T", "shuffle=3")
    assert "no @task named 'nope'" in refused(capsys, to, str(lab / "lab_tasks.py@nope"))
    assert "holds several tasks: lab_custom, lab_graded, lab_mc, lab_short" in refused(capsys, to, str(lab / "lab_tasks.py"))
    pictured = tmp_path / "pictured.py"
    pictured.write_text(textwrap.dedent('''
        from inspect_ai import Task, task
        from inspect_ai.dataset import MemoryDataset, Sample
        from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
        from inspect_ai.scorer import match

        @task
        def pictured():
            message = ChatMessageUser(content=[ContentText(text="What is shown?"), ContentImage(image="a.png")])
            return Task(dataset=MemoryDataset([Sample(id="p1", input=[message], target="a cat")]), scorer=match())
    '''))
    err = refused(capsys, to, str(pictured))
    assert "sample 'p1': its input holds image content" in err and "labset import" in err


def test_the_scorers_map_onto_the_rules_canonically():
    rule = inspect_task.scorer_rule
    assert rule({"name": "inspect_ai/exact", "params": {}}) == "exact()"
    assert rule({"name": "inspect_ai/includes", "params": {"ignore_case": False}}) == "includes(ignore_case=false)"
    assert rule({"name": "inspect_ai/answer", "params": {"pattern": "word"}}) == "answer(word)"
    assert rule({"name": "inspect_ai/pattern", "params": {"pattern": r"ANSWER: (\w+)", "ignore_case": True,
                                                          "match_all": False}}) == \
        r"pattern(ANSWER: (\w+), ignore_case=true, match_all=false)"
    for bad in ({"name": "match", "params": {}}, {"name": "inspect_ai/f1", "params": {}},
                {"name": "inspect_ai/match", "params": {"location": "middle", "ignore_case": True, "numeric": False}}):
        with pytest.raises(inspect_task.TaskImportError, match="people could not be scored as its models were"):
            rule(bad)


def test_a_task_of_a_package_is_named_as_module_at_task(lab, tmp_path, monkeypatch, capsys):
    package = tmp_path / "labpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "evals.py").write_text(LAB.replace('"short.jsonl"', repr(str(lab / "short.jsonl"))))
    monkeypatch.chdir(tmp_path)  # importable from where the command runs, as for inspect eval
    code, out, err = run(capsys, "import-task", "labpkg.evals@lab_short", "--to", str(tmp_path / "sets"))
    assert (code, err) == (0, ""), err
    record = json.loads((tmp_path / "sets" / "lab_short.jsonl.task.json").read_text())
    assert record["task"] == "labpkg.evals@lab_short" and record["file"].endswith("labpkg/evals.py")
    assert [i["target"] for i in load_set(tmp_path / "sets" / "lab_short.jsonl")][:2] == [["Paris"], ["Jupiter", "Jove"]]
