"""Token extraction: every abstract token of a sample, with its roles, and no syntax word."""

from structext_core.benchmark.formats import LANGUAGES, get_module
from structext_core.studio import rewrite as rw
from tests.studio.rewrite.support import sample


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
