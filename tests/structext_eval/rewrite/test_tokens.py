"""Token extraction: every abstract token of a sample, with its roles, and no syntax word."""

from structext_core.structext_eval import rewrite as rw
from structext_core.structext_eval.formats import LANGUAGES, get_module
from tests.structext_eval.rewrite.support import sample


def test_tokens_have_roles_and_exclude_syntax_words():
    s = sample(8, depth=1)
    tokens = {t.text: t.kinds for t in rw.extract_tokens(s)}
    assert tokens == {"k": ["id"], "Z": ["key"], "w": ["value"], "l": ["id", "question"], "Y": ["key"],
                      "v": ["value"]}


def test_csv_tokens_are_cells_not_headers():
    s = sample(2, depth=2)
    texts = {t.text for t in rw.extract_tokens(s)}
    assert not texts & {"primeKey", "salary", "height", "location", "gender"}
    threshold = str(s["params"]["threshold"])
    kinds = {t.text: t.kinds for t in rw.extract_tokens(s)}
    assert kinds[threshold] == ["number"]  # the question's threshold is mappable too


def test_markup_tokens_cover_headings_words_bold_and_files():
    s = sample(21)
    kinds = {k for t in rw.extract_tokens(s) for k in t.kinds}
    assert kinds == {"heading", "word", "bold", "file"}
    assert not {t.text for t in rw.extract_tokens(s)} & rw.RESERVED["markdown"]


def test_reserved_words_are_each_formats_own():
    assert set(rw.RESERVED) == set(LANGUAGES)
    assert all(rw.RESERVED[language] is get_module(language).RESERVED_WORDS for language in LANGUAGES)


def test_question_parameters_are_tokens_and_floats_read_as_integers():
    s = sample(4)  # the join: location and height
    params = rw.question_params(s)
    assert set(params) == {"location", "height"} and params["height"] == str(int(s["params"]["height"]))
    kinds = {t.text: t.kinds for t in rw.extract_tokens(s)}
    assert "number" in kinds[params["height"]]


def _cut_samples():
    """Generated markup samples where a bold run or an image stands inside a word (as the
    generator writes them: ``mon**salvage**key``, ``jar\\textbf{kangaroo}gon``, ``essen[[tq.gif]]ce``)."""
    import re

    from structext_core.structext_eval import suites

    found = {}
    for task_id in (21, 24, 27):  # markdown, latex, org: text retrieval with bold runs and images
        for s in suites.generate_cell(task_id, 2, 2, 3, suite="test"):
            syntax = get_module(s["language"]).SYNTAX
            marks = f"{syntax.image_re.pattern}|{syntax.bold_re.pattern}"
            if re.search(rf"[A-Za-z0-9](?:{marks})[A-Za-z0-9]", s["reference"]):
                found.setdefault(s["language"], s)
    return found


def test_a_word_cut_by_bold_or_an_image_is_one_token_and_is_renamed_whole():
    """Issue 19: 'angaroo', 'ify' were listed as tokens: fragments of words a bold run or an image cut."""
    import re

    found = _cut_samples()
    assert set(found) == {"markdown", "latex", "org"}
    for language, s in found.items():
        syntax = get_module(language).SYNTAX
        marks = f"{syntax.image_re.pattern}|{syntax.bold_re.pattern}"
        m = re.search(rf"(?<![A-Za-z0-9])([A-Za-z0-9]+)(?:{marks})([A-Za-z0-9]+)(?![A-Za-z0-9])", s["reference"])
        left, right = m.group(1), m.group(m.lastindex)
        texts = {t.text for t in rw.extract_tokens(s)}
        assert left + right in texts, (language, left, right)
        words = set(re.findall(r"[A-Za-z0-9]+", re.sub(marks, "#", s["reference"])))  # whole words, runs apart
        fragments = {piece for piece in (left, right) if piece not in words}
        assert not fragments & texts, (language, fragments & texts)
        mapping = rw.mechanical_mapping(s)
        texts_after = rw.apply_mapping(s, mapping)
        assert mapping[left + right] in texts_after.reference  # the cut word is renamed, its run kept after it
        report = rw.check_rewrite(s, texts_after.reference, texts_after.question, texts_after.answer)
        assert report.structure_ok and report.answer_ok, (language, report)
