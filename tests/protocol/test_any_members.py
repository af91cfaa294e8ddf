"""The tests that hold for any set of members (issue 43, item 5): a fourth benchmark installed as an
outside package, its member a top-level module (not under structext_core) whose display name is a
common word ("Numeric") and whose stratum is ``language``, fails none of the checks of the registry,
the access table, the layers and the names, and is still seen where shared code names it.
"""
from __future__ import annotations

import sys

import pytest

from structext_core import protocol
from tests import test_benchmark_names as names_test
from tests import test_layers as layers_test
from tests.aibench import test_registry as registry_test
from tests.studio import test_access as access_test

#: The member module, as a lab's package would ship it: a top-level module ``numeric_member``.
MEMBER_SOURCE = '''\
"""A numeric benchmark: each item asks for a number, in one language."""
from structext_core.protocol import Place, ShownQuestion

NAME = "numeric"
DISPLAY_NAME = "Numeric"
SUMMARY = "Questions whose answer is a number, asked in several languages; a numeric answer is right or not."
PLACES = (Place("results", "its models' accuracy", True),)
ITEM_FIELDS = ("id", "question", "answer", "language")
AXES = ("language",)
STRATA = {"language": str}
PUBLIC_DATA = "numeric sets"


def item_id(item) -> str:
    return item["id"]


def show_question(item) -> ShownQuestion:
    return ShownQuestion(text=item["question"])


def score_answer(item, reply: str) -> float:
    return 1.0 if reply.strip() == str(item["answer"]) else 0.0
'''


@pytest.fixture
def numeric(install_member, tmp_path):
    """The benchmark ``numeric`` installed from the distribution ``numeric-bench``, its entry point
    naming the top-level module ``numeric_member``."""
    folder = tmp_path / "dist"  # the folder install_member puts on sys.path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "numeric_member.py").write_text(MEMBER_SOURCE, encoding="utf-8")
    sys.modules.pop("numeric_member", None)
    yield install_member("numeric_bench", "numeric", "numeric_member")
    sys.modules.pop("numeric_member", None)


def test_the_registry_lists_it_beside_the_three_built_in_members(numeric):
    assert numeric.__name__ == "numeric_member" and numeric.__file__.endswith("numeric_member.py")
    assert protocol.NAMES == ["structext-eval", "aibench", "labset", "numeric"]  # ORDER 100: after the three
    assert protocol.REGISTRY["numeric"] == protocol.Benchmark("numeric_member", "Numeric")
    assert protocol.get_module("numeric").STRATA == {"language": str}
    # the registry's and the access table's checks of the built-in members still hold beside it
    registry_test.test_registry_lists_the_built_in_benchmarks_in_order()
    registry_test.test_unknown_benchmark_is_named()
    access_test.test_the_table_covers_every_page_file_and_nothing_else()
    access_test.test_the_benchmarks_pages_are_in_their_packages_and_keep_their_place_and_url()
    assert protocol.REGISTRY["numeric"].display_name in [s.title for s in access_test.access.home_sections("admin")]


def test_the_layers_hold_with_a_member_outside_structext_core(numeric):
    from tests.source_names import core_folder, member_package

    assert member_package(numeric) == "numeric_member" and core_folder(numeric) is None
    assert layers_test.member_packages()["numeric_member"] == "numeric_member"
    layers_test.test_every_core_module_sits_in_a_layer_or_a_benchmark()  # it has no folder there
    for path in layers_test.core_files():
        relative = str(path.relative_to(layers_test.ROOT))
        assert layers_test.crossings(relative, path.read_text(encoding="utf-8")) == set(), relative
    # a shared module that imports it reaches into it, also inside a function
    for source in ("import numeric_member\n", "def later():\n    from numeric_member import score_answer\n",
                   "import numeric_member.sub as sub\n"):
        assert layers_test.crossings("structext_core/studio/example.py", source) == {"numeric_member"}, source
    assert layers_test.crossings("structext_core/studio/example.py", "import numeric_members\n") == set()


def test_no_shared_file_names_it_for_a_word_in_prose(numeric):
    """The shared files say "numeric" in prose and in their own variables (pd.to_numeric,
    ``numeric = frame.copy()``, "font-variant-numeric"): none of it names the benchmark."""
    assert "numeric" in {s.name for s in names_test.spellings()}
    for path in names_test.outside_files():
        found = names_test.naming_lines(path.read_text(encoding="utf-8"))
        relative = names_test.relative(path)
        assert not [line for line, named in found.items() if "numeric" in named], relative
        assert len(found) == names_test.HISTORY.get(relative, 0), relative
    # its stratum ``language`` is one more benchmark's: the reads known stay as many
    assert names_test.specific_fields()["language"] == {"structext-eval", "numeric"}
    for path in names_test.outside_files():
        relative = names_test.relative(path)
        known = names_test.KNOWN.get(relative, names_test.FIELD_HISTORY.get(relative, 0))
        assert len(names_test.field_reads(path.read_text(encoding="utf-8"))) == known, relative


@pytest.mark.parametrize("line", [
    "import numeric_member",
    "from numeric_member import score_answer",
    "numeric_member.score_answer(item, reply)",
    'BENCHMARK = "numeric"',
    "if chosen == 'Numeric':",
    "TITLES = {'NUMERIC': 1}",
    'VIEW = "numeric_member:results_view"',
    'LINK = "results?benchmark=numeric"',
    'db.execute("SELECT * FROM studies WHERE benchmark = \'numeric\'")',
    "scores = protocol.numeric",
    "numeric = protocol.get_module(NAME)",  # a module's own name for it, not a function's word
])
def test_a_shared_module_that_uses_it_is_still_flagged(numeric, line):
    assert names_test.naming_lines(line + "\n") == {1: {"numeric"}}, line


@pytest.mark.parametrize("text", [
    "# a numeric answer is scored as a number\n",
    'def f():\n    """Give a numeric answer, as Numeric items ask."""\n',
    'MESSAGE = "Enter a numeric value"\n',
    "def f(frame):\n    numeric = frame.copy()\n    return numeric\n",
    "x = pd.to_numeric(frame['score'])\n",
    'STYLE = "font-variant-numeric: tabular-nums"\n',
])
def test_prose_and_a_functions_own_words_do_not_name_it(numeric, text):
    assert names_test.naming_lines(text) == {}, text


def test_a_shared_module_reading_its_stratum_by_name_is_flagged(numeric):
    assert names_test.field_reads('by = ["language"]\n') == {1: {"language"}}
    assert names_test.field_reads("label = item.language\n") == {1: {"language"}}
    assert names_test.field_reads("# the item's language\n") == {}
