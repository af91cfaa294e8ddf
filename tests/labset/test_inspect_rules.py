"""The Inspect rules score as Inspect AI's own scorers do (issue 44, item 4): for each family
(exact; match at each location, numeric or not, case ignored or not; includes; answer letter, word
and line; pattern with and without ignore_case and match_all), our verdict equals the installed
inspect_ai scorer's CORRECT on at least 10,000 generated (target, reply) pairs; and the rules'
syntax, its canonical form and its errors."""
from __future__ import annotations

import asyncio
import random

import pytest

from structext_core.labset import dataset, inspect_rules, scoring
from structext_core.labset._inspect_unicode import unicode_number_to_float
from structext_core.labset.inspect_rules import parse_rule

PAIRS = 10_000  # per family, at least

# ---------------------------------------------------------------- generated replies and targets

WORDS = ["Paris", "paris", "PARIS", "the", "a", "An", "answer", "Answer", "yes", "No", "Eiffel-Tower", "café",
         "CAFÉ", "straße", "STRASSE", "İstanbul", "ǅ", "Ｐａｒｉｓ", "naïve", "x", "b", "B", "c", "ab", "e", "E"]
NUMBERS = ["42", "42.0", "-42", "+42", "−42", "1,000", "1000", "1,000.50", "1000.5", "0.5", ".5", "5.", "3.14159",
           "3.141592", "1e3", "1E-2", "$20", "\\$20", "€1,234", "£5", "60%", "60", "0.6", "(42)", "42!", "[7]", "7;",
           "**5**", "_5_", "1_000", "inf", "nan", "½", "2½", "3²", "٣", "三", "十二", "１２", "12,5", "1.234.567",
           "-0", "0", "00", "007", "7.000001", "7.00001", "1,2,3", "~42", "<42", "4 2", "1 000", "e5", "2e", "-"]
PUNCT = [".", ",", "!", "?", ":", ";", "'", '"', "(", ")", "-", "*", "_", "...", "—", "«", "»", "…", "¿", "$"]
SPACE = [" ", "  ", "\t", "\n", " \n ", "\u00a0", "\u2009", ""]


def _token(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        word = rng.choice(WORDS)
        return rng.choice([word, word.lower(), word.upper(), word.title()])
    if kind < 0.8:
        return rng.choice(NUMBERS)
    return rng.choice(PUNCT)


def _text(rng: random.Random, n_max: int = 4) -> str:
    parts = []
    for _ in range(rng.randint(0, n_max)):
        parts.append(_token(rng))
        parts.append(rng.choice(SPACE) if rng.random() < 0.8 else rng.choice(PUNCT))
    return "".join(parts)


def _vary(rng: random.Random, text: str) -> str:
    """``text`` as a reply might give it: recased, wrapped in punctuation or white space."""
    roll = rng.random()
    if roll < 0.2:
        text = text.upper()
    elif roll < 0.4:
        text = text.lower()
    if rng.random() < 0.3:
        text = rng.choice(PUNCT) + text + rng.choice(PUNCT)
    if rng.random() < 0.3:
        text = rng.choice(SPACE) + text + rng.choice(SPACE)
    return text


def _targets(rng: random.Random) -> list[str]:
    n = rng.choice([1, 1, 1, 2, 3])
    return [rng.choice(["", " ", _token(rng), _text(rng, 2), _token(rng) + " " + _token(rng)]) for _ in range(n)]


def _reply(rng: random.Random, targets: list[str]) -> str:
    """A reply holding one of the targets at its begin, end or middle (or none), amid noise."""
    target = _vary(rng, rng.choice(targets))
    where = rng.random()
    if where < 0.15:
        return target
    if where < 0.35:
        return target + rng.choice(SPACE) + _text(rng)
    if where < 0.6:
        return _text(rng) + rng.choice(SPACE) + target
    if where < 0.8:
        return _text(rng) + rng.choice(SPACE) + target + rng.choice(SPACE) + _text(rng)
    return rng.choice(["", " ", "\n", _text(rng, 6)])


def _answer_targets(rng: random.Random) -> list[str]:
    """Targets as an ``answer`` scorer's are: mostly a letter or a word, sometimes a line (or empty)."""
    return [rng.choice(["A", "b", "C", "d", "B", _token(rng), rng.choice(WORDS), _text(rng, 2), ""])
            for _ in range(rng.choice([1, 1, 2]))]


def _answer_reply(rng: random.Random, targets: list[str]) -> str:
    """A reply that may say ``ANSWER:`` once, twice or never, on its own line or not."""
    lines = [_text(rng, 3) for _ in range(rng.randint(0, 2))]
    for _ in range(rng.choice([0, 1, 1, 1, 1, 2])):
        said = rng.choice(targets + [_token(rng)])
        said = rng.choice([said, said, said.lower(), said.upper(), _vary(rng, said)])
        head = rng.choice(["ANSWER:", "Answer:", "answer :", "ANSWER: ", "ANSWER:  ", "ANSWER :\t", "ANSWER"])
        tail = rng.choice(["", "", ".", "!", " ", " and more", ")", "\n", "?\n"])
        lines.append(rng.choice(["", "so, "]) + head + said + tail)
        if rng.random() < 0.3:
            lines.append(_text(rng, 2))
    return rng.choice(["\n", "\n\n", " "]).join(lines)


REGEXES = [r"ANSWER: (\w+)", r"answer\s*:\s*(.+)", r"(\d+)", r"(\w+)-(\w+)", r"([a-z]*)", r"(?:x(\d))?(\w)?",
           r"\b\w+\b", r"(a)|(b)", r"(.*)", r"(\d+)\D+(\d+)", r"(paris|lyon)", r"(ANSWER): ([A-D])", r"(?i)(yes|no)"]


PATTERN_TARGETS = ["A", "b", "C", "yes", "No", "paris", "Lyon", "42", "7", "x", "a", "ANSWER", "", "Eiffel"]


def _pattern_targets(rng: random.Random) -> list[str]:
    return [rng.choice(PATTERN_TARGETS + [_token(rng)]) for _ in range(rng.choice([1, 1, 2, 3]))]


def _pattern_reply(rng: random.Random, targets: list[str]) -> str:
    """A reply shaped for the regexes: an ``ANSWER:``, two words joined, two numbers, a word amid noise."""
    if rng.random() < 0.2:
        return _answer_reply(rng, targets)
    t, u = (rng.choice([*targets, rng.choice(PATTERN_TARGETS)]) for _ in range(2))
    t, u = (rng.choice([w, w, w.upper(), w.lower(), w.title()]) for w in (t, u))
    template = rng.choice(["ANSWER: {t}", "answer :{t}\n{n}", "{t}-{u}", "{t} {u}", "{t}", "{n} {t} {n}",
                           "x{t}{u}", "the answer is {t}", "{t}\n{u}", "ANSWER: {t} then ANSWER: {u}", "{t},{u}"])
    return template.format(t=t, u=u, n=_text(rng, 2))


# ---------------------------------------------------------------- Inspect's own scorers


def _run_inspect(cases):
    """Inspect's verdict (value == CORRECT) on each (scorer, targets, reply), all in one event loop."""
    inspect_ai = pytest.importorskip("inspect_ai")
    assert inspect_ai.__version__ == "0.3.285", "the rules reproduce inspect_ai 0.3.285: re-check them first"
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.scorer import CORRECT, Target
    from inspect_ai.solver import TaskState

    async def run():
        state = TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input="", messages=[],
                          output=ModelOutput.from_content("mockllm/model", "start"))
        assert state.output.completion == "start"
        verdicts = []
        for scorer, targets, reply in cases:
            state.output.completion = reply  # as ModelOutput.from_content(model, reply) gives it (checked below)
            score = await scorer(state, Target(targets))
            verdicts.append(score.value == CORRECT)
        return verdicts

    return asyncio.run(run())


def _inspect_scorer(rule):
    from inspect_ai import scorer as inspect_scorer
    if rule.name == "exact":
        return inspect_scorer.exact()
    if rule.name == "pattern":
        return inspect_scorer.pattern(rule.regex, **dict(rule.options))
    if rule.name == "answer":
        return inspect_scorer.answer(rule.option("pattern"))
    return getattr(inspect_scorer, rule.name)(**dict(rule.options))


def _compare(rules, make_reply, seed: int, per_rule: int, make_targets=_targets):
    """Our verdict and Inspect's on ``per_rule`` generated pairs for each of ``rules``: the pairs that differ."""
    pytest.importorskip("inspect_ai")
    rng = random.Random(seed)
    cases, ours = [], []
    for written in rules:
        rule = parse_rule(written)
        scorer = _inspect_scorer(rule)
        for _ in range(per_rule):
            targets = make_targets(rng)
            reply = make_reply(rng, targets)
            cases.append((scorer, targets, reply))
            ours.append((written, targets, reply, scoring.short_right(reply, targets, rule)))
    theirs = _run_inspect(cases)
    differ = [(w, t, r, mine) for (w, t, r, mine), inspect in zip(ours, theirs) if mine != inspect]
    rights = sum(theirs)
    assert len(theirs) >= PAIRS
    assert 0.05 * len(theirs) < rights < 0.95 * len(theirs), f"the pairs test little: {rights} right of {len(theirs)}"
    return differ


def _bools(*names):
    out = [{}]
    for name in names:
        out = [{**o, name: v} for o in out for v in (True, False)]
    return out


def _written(name, options):
    return f"{name}({', '.join(f'{k}={str(v).lower()}' for k, v in options.items())})"


def test_exact_scores_as_inspects_exact():
    assert _compare(["exact"], _reply, seed=1, per_rule=PAIRS) == []


def test_match_scores_as_inspects_match_at_each_location_numeric_or_not_case_or_not():
    rules = [_written("match", {"location": loc, **opts}) for loc in inspect_rules.LOCATIONS
             for opts in _bools("ignore_case", "numeric")]
    assert len(rules) == 16
    assert _compare(rules, _reply, seed=2, per_rule=PAIRS // 16 + 1) == []


def test_includes_scores_as_inspects_includes():
    rules = ["includes(ignore_case=true)", "includes(ignore_case=false)"]
    assert _compare(rules, _reply, seed=3, per_rule=PAIRS // 2) == []


def test_answer_scores_as_inspects_answer():
    rules = ["answer(letter)", "answer(word)", "answer(line)"]
    assert _compare(rules, _answer_reply, seed=4, per_rule=PAIRS // 3 + 1, make_targets=_answer_targets) == []


def test_pattern_scores_as_inspects_pattern():
    rules = [_written("pattern", opts).replace("pattern(", f"pattern({regex}, ")
             for regex in REGEXES for opts in _bools("ignore_case", "match_all")]
    assert len(rules) == 4 * len(REGEXES)
    assert _compare(rules, _pattern_reply, seed=5, per_rule=PAIRS // len(rules) + 1,
                    make_targets=_pattern_targets) == []


def test_a_completion_is_the_reply_as_given():
    """The scorers above read the reply set on ``output.completion``: the same as a ModelOutput made from it."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ModelOutput
    rng = random.Random(6)
    for _ in range(200):
        reply = _answer_reply(rng, _targets(rng))
        assert ModelOutput.from_content("mockllm/model", reply).completion == reply


def test_the_unicode_number_reader_is_inspects():
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer._unicode import unicode_number_to_float as theirs
    rng = random.Random(7)
    texts = NUMBERS + [_text(rng, 2) for _ in range(2000)] + ["".join(rng.choices(NUMBERS + PUNCT, k=3))
                                                              for _ in range(2000)]

    def read(parse, text):
        try:
            return parse(text)
        except (ValueError, OverflowError, ZeroDivisionError) as error:
            return type(error).__name__

    for text in texts:
        assert read(unicode_number_to_float, text) == read(theirs, text), text


# ---------------------------------------------------------------- the syntax


@pytest.mark.parametrize(("written", "canonical"), [
    ("normalised", "normalised"), ("verbatim", "verbatim"), ("exact", "exact()"), (" exact() ", "exact()"),
    ("match", "match(location=end, ignore_case=true, numeric=false)"),
    ("match(any)", "match(location=any, ignore_case=true, numeric=false)"),
    ("match( location = begin , numeric=TRUE )", "match(location=begin, ignore_case=true, numeric=true)"),
    ("includes", "includes(ignore_case=true)"), ("includes(ignore_case=false)", "includes(ignore_case=false)"),
    ("answer(word)", "answer(word)"), ("answer(pattern=line)", "answer(line)"),
    (r"pattern(ANSWER: (\w+))", r"pattern(ANSWER: (\w+), ignore_case=true, match_all=false)"),
    (r"pattern((\d+), (\d+), match_all=true)", r"pattern((\d+), (\d+), ignore_case=true, match_all=true)"),
    (r"pattern(a(?:, match_all=true), match_all=false)", r"pattern(a(?:, match_all=true), ignore_case=true, match_all=false)"),
    ("pattern(x, match_all=true, match_all=false)", "pattern(x, match_all=true, ignore_case=true, match_all=false)"),
])
def test_a_rule_has_one_written_form(written, canonical):
    assert inspect_rules.canonical_rule(written) == canonical
    assert parse_rule(canonical) == parse_rule(written)
    assert inspect_rules.canonical_rule(canonical) == canonical


@pytest.mark.parametrize(("written", "says"), [
    ("fuzzy", "no answer rule 'fuzzy'"), ("Exact", "no answer rule"), (3, "a text"),
    ("match(location=middle)", "location must be one of begin, end, any, exact, got 'middle'"),
    ("match(numeric=yes)", "numeric must be true or false"), ("match(case=true)", "not 'case'"),
    ("match(any, location=end)", "location given twice"), ("match(location=any", "must end with ')'"),
    ("includes(false)", "as key=value"), ("answer", "needs its kind"), ("answer(number)", "letter, word, line"),
    ("exact(x)", "takes no argument"), ("pattern", "needs its regular expression"), ("pattern()", "needs its"),
    ("pattern((unclosed)", "not a regular expression"), ("pattern(x, ignore_case=maybe)", "true or false"),
    ("pattern(" + "a" * 501 + ")", "501 characters, more than 500"),
])
def test_a_rule_written_wrong_says_what_is_wrong(written, says):
    with pytest.raises(ValueError, match=None) as raised:
        parse_rule(written)
    assert says in str(raised.value)


def test_every_rule_offered_parses_and_is_described():
    assert {"normalised", "verbatim", "exact", "match", "includes", "answer(letter)"} <= set(dataset.RULES)
    for rule in dataset.RULES + (r"pattern(ANSWER: (\w+), match_all=true)", "match(location=exact, numeric=true)"):
        sentence = scoring.describe_rule(rule)
        assert sentence.endswith(".") and len(sentence) > 40
    assert "Inspect AI's match(location=\"any\"" in scoring.describe_rule("match(any)")
    assert "last number" in scoring.describe_rule("match(numeric=true)")
    assert "every group" in scoring.describe_rule("pattern(x, match_all=true)")


def test_a_key_reads_back_its_rule_even_when_the_regex_holds_the_separator():
    item = {"choices": [], "target": ["Paris", "a: b"], "rule": r"pattern(ANSWER: (.+)\s*$)"}
    key = scoring.study_key(item)
    assert key == r"pattern(ANSWER: (.+)\s*$, ignore_case=true, match_all=false): Paris | a: b"
    rule, targets = inspect_rules.split_key(key)
    assert rule == parse_rule(item["rule"]) and targets == ["Paris", "a: b"]
    assert scoring.score_key(key, "So.\nANSWER: A: B") and not scoring.score_key(key, "ANSWER: Lyon")


def test_a_pattern_reads_a_bounded_reply():
    rule = parse_rule(r"pattern(ANSWER: (\w+))")
    assert scoring.short_right("x" * 19_000 + "ANSWER: yes", ["yes"], rule)
    assert not scoring.short_right("x" * 20_000 + "ANSWER: yes", ["yes"], rule)
    assert scoring.short_right("ANSWER: no\n" + "x" * 30_000 + "\nANSWER: yes", ["yes"], parse_rule("answer(word)"))


def test_a_set_declares_any_rule_and_its_items_carry_it_canonical(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text('{"input": "Capital of France?", "target": "Paris"}\n'
                    '{"input": "How many?", "target": "1,000", "metadata": {"answer_rule": "match(numeric=true)"}}\n'
                    '{"input": "Which?", "target": "B", "metadata": {"answer_rule": "answer(sentence)"}}\n',
                    encoding="utf-8")
    with pytest.raises(dataset.LabSetError, match=r"metadata.answer_rule.*pattern must be one of letter, word, line"):
        dataset.load_set(path, rule="exact")
    path.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8")
    items = dataset.load_set(path, rule="exact")
    assert [item["rule"] for item in items] == ["exact()", "match(location=end, ignore_case=true, numeric=false)"
                                                .replace("numeric=false", "numeric=true")]
    assert scoring.score(items[1], "about 1000.0") == 1.0 and scoring.score(items[0], "paris!") == 1.0
    with pytest.raises(dataset.LabSetError, match="no answer rule 'fuzzy'"):
        dataset.load_set(path, rule="fuzzy")
