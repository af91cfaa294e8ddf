"""Per format: render then parse back, and each solver on small hand-made references."""

import json
import random

import pytest
import yaml
from lxml import etree

from structext_core.structext_eval import names
from structext_core.structext_eval.formats import (
    LANGUAGES,
    ReadError,
    csv_format,
    json_format,
    latex,
    markdown,
    org,
    tree_format,
    xml_format,
    yaml_format,
)
from structext_core.structext_eval.tasks import TASKS, answers_agree
from structext_core.structext_eval.tree import build_tree, node_count


def solve(task_id, reference, question, depth=0, width=0):
    return TASKS[task_id].solve_text(reference, question, depth, width)


# ---- names ---------------------------------------------------------------------

def test_names_follow_the_original_counters():
    assert [names.node_name(i) for i in (0, 25, 26, 27, 52)] == ["a", "z", "ab", "bb", "ac"]
    assert [names.value_name(i) for i in (0, 25, 26, 27)] == ["z", "a", "zy", "yy"]
    assert [names.key_name(i) for i in (0, 1, 26)] == ["Z", "Y", "ZY"]
    assert names.node_name(26**3 + 5) == names.base26(26**3 + 5)
    assert [names.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "111th"]


def test_tree_shape_follows_depth_times_width():
    root = build_tree(random.Random(0), 3, 2, 6)
    assert len(list(root.walk())) == node_count(3, 2) == 1 + 6 + 36 + 216
    assert all(len(n.children) in (0, 6) for n in root.walk())
    assert all(1 <= len(n.fields) <= 18 for n in root.walk())
    values = [v for n in root.walk() for _, v in n.fields]
    assert len(values) == len(set(values))  # values are unique, so PathCompose has one answer


# ---- tree ------------------------------------------------------------------------

def test_tree_single_edge():
    assert solve(5, "q->r", "What is the height of the root node?") == "1"
    assert solve(6, "q->r", "What is the depth of node q?") == "0"
    assert solve(7, "q->r", "What is the path from the root node to the node r?") == "q->r"


def test_tree_lookalike_names_and_deepest_level():
    ref = "b->ab\nab->abb\nabb->bb\nb->bbb"
    assert solve(6, ref, "What is the depth of node bb?") == "3"
    assert solve(6, ref, "What is the depth of node ab?") == "1"
    assert solve(7, ref, "What is the path from the root node to the node bb. Answer should look like A->D->H.") == "b->ab->abb->bb"
    assert solve(5, ref, "What is the height of the root node?") == "3"


def test_tree_round_trip():
    root = build_tree(random.Random(3), 2, 2, 6, with_fields=False)
    edges = tree_format.EdgeTree(tree_format.render(root))
    assert edges.root == root.name and edges.height() == 2
    for n in root.walk():
        assert edges.path_to(n.name) == [p.name for p in n.path()]


def test_tree_errors_say_what():
    with pytest.raises(ReadError, match="does not occur"):
        solve(6, "a->b", "What is the depth of node zz?")
    with pytest.raises(ReadError, match="line 2"):
        tree_format.EdgeTree("a->b\nb c")


# ---- csv -------------------------------------------------------------------------

CSV = ("primeKey,gender,age,name,height,weight,color\n"
       "a,male,30,x,180,70,olive\nab,female,41,y,170,60,tan\nb,female,22,z,181,55,fair\n\n"
       "primeKey,status,salary,company,location\n"
       "a,employed,50000,Apple,CA\nab,employed,50001,IBM,CA\nb,unemployed,1000,Meta,NY")


def test_csv_retrieval_with_lookalike_keys():
    assert solve(1, CSV, "What is the company of record with primeKey ab") == "IBM"
    assert solve(1, CSV, "What is the height of record with primeKey a?") == "180"


def test_csv_statistics_are_strict():
    assert solve(2, CSV, "How many people work with salary more than 50000?") == "1"
    assert solve(2, CSV, "How many people work with salary more than 999?") == "3"
    assert solve(3, CSV, "How many people are female?") == "2"


def test_csv_join_on_primekey():
    assert solve(4, CSV, "How many people who work in CA are taller than 170?") == "1"
    assert solve(4, CSV, "How many people who work in NY are taller than 170?") == "1"
    assert solve(4, CSV, "How many people who work in TX are taller than 0?") == "0"


def test_csv_round_trip_and_ragged_row():
    people, jobs = csv_format.make_tables(random.Random(1), 5)
    tables = csv_format.tables(csv_format.render(people, jobs))
    assert [rows for _, rows in tables] == [people, jobs]
    with pytest.raises(ReadError, match="row 3"):
        csv_format.tables("a,b\n1,2\n3")


# ---- json ------------------------------------------------------------------------

JSON = """{
"id":"a",
"Z":"b",
"subs":[
 {
 "id":"b",
 "Y":"bb",
 "subs":[
  {
  "id":"c",
  "X":"ab",
  "subs":[]
  }
 ]
 },
 {
 "id":"d",
 "W":"bbb",
 "subs":[]
 }
]
}"""


def test_json_object_excerpt_is_dedented():
    got = solve(8, JSON, "What is the object with id b?")
    assert got == '{\n"id":"b",\n"Y":"bb",\n"subs":[\n {\n "id":"c",\n "X":"ab",\n "subs":[]\n }\n]\n}'
    assert solve(8, JSON, "What is the object with id a?") == JSON


def test_json_lookalike_values_and_deepest():
    assert solve(11, JSON, 'How to access value "bb"?') == 'obj["subs"][0]["Y"]'
    assert solve(11, JSON, 'How to access value "b"?') == 'obj["Z"]'  # the id "b" is not a value
    assert solve(11, JSON, 'How to access value "ab"?') == 'obj["subs"][0]["subs"][0]["X"]'
    assert solve(12, JSON, "What are the most deeply nested objects?") == '{\n"id":"c",\n"X":"ab",\n"subs":[]\n}'
    assert solve(9, JSON, "What is the first object's id of subs?") == "b"


def test_json_single_node_and_syntax():
    single = '{\n"id":"q",\n"Z":"z",\n"subs":[]\n}'
    assert solve(12, single, "deepest?") == single
    assert solve(10, single, "Is there any structural error in this JSON?") == "False"
    assert solve(10, single[:-2], "Is there any structural error in this JSON?") == "True"
    with pytest.raises(ReadError, match="first object"):
        solve(9, single, "What is the first object's id of subs?")


def test_json_round_trip_matches_the_tree():
    root = build_tree(random.Random(5), 2, 2, 6)
    data = json.loads(json_format.render(root))

    def check(node, obj):
        assert obj["id"] == node.name
        assert [(k, v) for k, v in obj.items() if k not in ("id", "subs")] == node.fields
        assert len(obj["subs"]) == len(node.children)
        for child, sub in zip(node.children, obj["subs"]):
            check(child, sub)

    check(root, data)


# ---- yaml ------------------------------------------------------------------------

YAML = '''id: "a"
Z: no
subs: 
- id: "b"
  Y: bb,
  subs: 
  - id: "c"
    X: ab
    subs: []
- id: "d"
  W: bbb
  subs: []'''


def test_yaml_excerpts_keep_the_file_text():
    assert solve(13, YAML, "What is the object with id b?") == 'id: "b"\nY: bb,\nsubs: \n- id: "c"\n  X: ab\n  subs: []'
    assert solve(17, YAML, "deepest?") == 'id: "c"\nX: ab\nsubs: []'


def test_yaml_scalars_stay_strings_and_trailing_commas_are_accepted():
    assert solve(16, YAML, 'How to access value "no"?') == 'obj["Z"]'  # not the boolean False
    assert solve(16, YAML, 'How to access value "bb"?') == 'obj["subs"][0]["Y"]'
    assert solve(14, YAML, "first?") == "b"


def test_yaml_syntax_follows_the_real_parser():
    assert solve(15, YAML, "Is there any structural error in this YAML?") == "False"
    broken = YAML.replace('    subs: []\n- id: "d"', '    subs: []\n    :t\n- id: "d"')
    assert solve(15, broken, "Is there any structural error in this YAML?") == "True"
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(broken)


def test_yaml_round_trip():
    root = build_tree(random.Random(6), 2, 1, 6)
    data = yaml_format.load(yaml_format.render(root))
    assert data["id"] == root.name and len(data["subs"]) == 2
    assert data["subs"][1]["subs"][0]["id"] == root.children[1].children[0].name


# ---- xml -------------------------------------------------------------------------

XML = '''<?xml version="1.0" encoding="UTF-8"?>
<A Z="b">
 <B Y="bb">
  <C X="ab">
   cafe
  </C>
  banana
 </B>
 apple
</A>'''


def test_xml_content_is_dedented_by_the_element_indent():
    assert solve(18, XML, "What is the content of tag B?") == '<C X="ab">\n  cafe\n </C>\n banana'
    assert solve(18, XML, "What is the content of tag C?") == "cafe"
    assert solve(19, XML, "What is the tag with attribute of value bb?") == "B"
    assert solve(19, XML, "What is the tag with attribute of value b?") == "A"


def test_xml_syntax_and_entities_are_never_resolved(tmp_path):
    assert solve(20, XML, "error?") == "False"
    assert solve(20, XML.replace("  </C>\n", ""), "error?") == "True"
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    evil = f'<?xml version="1.0"?>\n<!DOCTYPE A [<!ENTITY x SYSTEM "file://{secret}">]>\n<A Z="b">\n &x;\n</A>'
    with pytest.raises(ReadError, match="line 2, column 14: the document declares an entity") as refused:
        xml_format.parse(evil)  # entity declarations are refused before the parser runs
    assert "TOPSECRET" not in str(refused.value)
    # Without the pre-scan, the parser itself never resolves the entity either.
    root = etree.fromstring(evil.encode(), xml_format._parser())
    assert "TOPSECRET" not in (root.text or "") + "".join(etree.tostring(c, encoding="unicode") for c in root)


def test_xml_round_trip():
    root = build_tree(random.Random(7), 2, 1, 6)
    parsed = xml_format.parse(xml_format.render(root))
    assert [e.tag for e in parsed.iter()] == [n.tag for n in root.walk()]
    assert [dict(e.attrib) for e in parsed.iter()] == [dict(n.fields) for n in root.walk()]


# ---- markdown, latex, org ------------------------------------------------------

MD = '''r
plain **one**text ![alt](a.png "hover text")
# s
two
## t
three **two words** ![alt](b.gif "hover text")
# u
four'''


def test_markdown_lists_and_sections():
    assert solve(21, MD, "Extract all bold texts.") == "one\ntwo words"
    assert solve(23, MD, "Extract all included image files.") == "a.png\nb.gif"
    assert solve(22, MD, "What is the content of 1st section?") == "# s\ntwo\n## t\nthree **two words** ![alt](b.gif \"hover text\")"
    assert solve(22, MD, "What is the content of 1th subsection under 1th section?").startswith("## t\nthree")
    assert solve(22, MD, "What is the content of 2nd section?") == "# u\nfour"
    with pytest.raises(ReadError, match="2nd subsection under 2nd section"):
        solve(22, MD, "What is the content of 2nd subsection under 2nd section?")


def test_empty_lists_use_the_original_sentence_and_compare_as_empty():
    single = "r\njust words"
    assert solve(21, single, "bold?") == "No bold texts presented in file."  # the original's wording
    assert answers_agree(TASKS[27], "No bold text is included in the file.", solve(27, single, "bold?"))
    assert solve(26, single, "figures?") == "No figure file is included in the file."
    assert answers_agree(TASKS[23], "No image file is included in the file.", solve(23, single, "images?"))
    assert not answers_agree(TASKS[23], "a.png", solve(23, single, "images?"))


LATEX = "r\nx \\textbf{b1} y\n\\section{s}\nz\\includegraphics[width=0.5\\textwidth]{f.jpg}\n\\subsection{t}\n\\textbf{b2}\n\\subsubsection{u}\ndeep\n\\section{v}\nlast"


def test_latex_deepest_level_and_lists():
    assert solve(25, LATEX, "What is the content of 1st subsubsection under 1st subsection under 1st section?") == "\\subsubsection{u}\ndeep"
    assert solve(25, LATEX, "What is the content of 2nd section?") == "\\section{v}\nlast"
    assert solve(24, LATEX, "bold?") == "b1\nb2"
    assert solve(26, LATEX, "figures?") == "f.jpg"


ORG = "r\nx*b1*y [[a.png]]\n* s\n*starts* a line\n** t\nwords *two words* here\n* u\nlast"


def test_org_bold_is_not_a_heading():
    assert solve(27, ORG, "bold?") == "b1\nstarts\ntwo words"
    assert solve(29, ORG, "images?") == "a.png"
    assert solve(28, ORG, "What is the content of 1st section?") == "* s\n*starts* a line\n** t\nwords *two words* here"
    assert solve(28, ORG, "What is the content of 1st subsection under 1st section?") == "** t\nwords *two words* here"


@pytest.mark.parametrize("module", [markdown, latex, org])
def test_markup_round_trip_headings(module):
    from structext_core.structext_eval.formats import markup as m
    doc = module.generate(random.Random(11), 3, 1, 2)
    lines, found = m.headings(module.SYNTAX, doc.reference)
    nodes = list(doc.tree.walk())[1:]
    assert [h.level for h in found] == [n.level for n in nodes]
    assert [lines[h.line] for h in found] == [module.SYNTAX.heading(n.level, n.name) for n in nodes]


def _original_latex_headings(reference: str) -> str:
    """Rewrite headings the way the original renderer did: level L as 'sub' * (L - 2) + 'section'."""
    import re as _re
    levels = {"section": 1, "subsection": 2, "subsubsection": 3}

    def shifted(m):
        level = levels[m.group(1)]
        return "\\" + "sub" * max(level - 2, 0) + "section{" + m.group(2) + "}"

    return _re.sub(r"^\\(section|subsection|subsubsection)\{(.*)\}$", shifted, reference, flags=_re.M)


@pytest.mark.parametrize("depth,width", [(2, 1), (3, 1), (3, 2)])
def test_latex_in_the_original_shifted_heading_style(depth, width):
    # Regression: the original writes levels 1 and 2 as \section and level 3 as \subsection;
    # the hierarchy comes back from the complete tree's shape (found auditing the original's output).
    from structext_core.structext_eval import suites
    for sample in suites.generate_cell(25, depth, width, 6, seed=depth * 10 + width):
        shifted = _original_latex_headings(sample["reference"])
        assert shifted != sample["reference"]
        want = _original_latex_headings(sample["answer"])
        assert solve(25, shifted, sample["question"], depth, width) == want


# ---- the format interface: every registered format offers all of it ----------------------

#: Every name of the interface (formats/__init__.py documents each), with what it must be.
INTERFACE = {
    "LANGUAGE": str, "generate": callable, "MAX_DEPTH": (int, type(None)), "SIZE": ("sample_chars",),
    "preview": callable, "RESERVED_WORDS": frozenset, "rewrite_tokens": callable, "value_problem": callable,
    "parse_error": callable, "line_signature": callable, "compare_structure": callable,
}


def interface_gaps(module) -> list[str]:
    """The names of the interface ``module`` lacks or offers as the wrong kind of thing."""
    gaps = []
    for name, kind in INTERFACE.items():
        value = getattr(module, name, None)
        if kind is callable:
            ok = callable(value)
        elif isinstance(kind, tuple) and isinstance(kind[0], str):
            ok = all(callable(getattr(value, attr, None)) for attr in kind)
        else:
            ok = hasattr(module, name) and isinstance(value, kind)
        if not ok:
            gaps.append(name)
    return gaps


def test_the_interface_test_knows_the_documented_interface():
    from structext_core.structext_eval import formats

    assert tuple(INTERFACE) == formats.INTERFACE
    import types
    ninth = types.ModuleType("toml_format")
    ninth.LANGUAGE, ninth.generate, ninth.preview = "toml", lambda *a, **k: None, lambda text: None
    assert interface_gaps(ninth) == ["MAX_DEPTH", "SIZE", "RESERVED_WORDS", "rewrite_tokens", "value_problem",
                                     "parse_error", "line_signature", "compare_structure"]


def test_the_registry_is_the_one_table_of_formats():
    from structext_core.structext_eval import formats

    assert LANGUAGES == list(formats.REGISTRY) == ["tree", "csv", "json", "yaml", "xml", "markdown", "latex", "org"]
    assert list(formats.DISPLAY_NAMES) == LANGUAGES
    assert set(formats.HIGHLIGHT) <= set(LANGUAGES)
    assert formats.get_module("xml") is xml_format and formats.get_module("latex") is latex
    for bad in ("toml", "", None, ["json"]):
        with pytest.raises(ValueError, match="unknown format"):
            formats.get_module(bad)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_format_offers_the_whole_interface(language):
    """A ninth format that forgets a piece of the interface fails here, not in a page."""
    from structext_core.structext_eval import formats
    from structext_core.structext_eval.suites import generate_sample

    module = formats.get_module(language)
    assert interface_gaps(module) == [], f"{module.__name__} lacks {interface_gaps(module)}"
    assert module.LANGUAGE == language
    task_id = min(t for t, task in TASKS.items() if task.language == language and not task.inject_errors)
    sample = generate_sample(task_id, 2, 1, seed=3)
    # generate: deterministic per random state; every format takes ``rows`` (only CSV uses it).
    doc = module.generate(random.Random(5), 2, 1, 3, inject_errors=False, rows=4)
    assert doc.reference == module.generate(random.Random(5), 2, 1, 3, rows=4).reference
    assert module.MAX_DEPTH is None or module.MAX_DEPTH >= 2
    assert 600 < module.SIZE.sample_chars(600, 2, 1, 6, None, 10**15) < 10**6
    view = module.preview(sample["reference"])
    assert isinstance(view, formats.Preview) and view.kind in {"markdown", "json", "tables", "graph", "none"}
    tokens = module.rewrite_tokens(sample["reference"])
    assert tokens and all(isinstance(tok, str) and isinstance(role, str) for tok, role in tokens)
    assert all(formats.TOKEN_RE.fullmatch(tok) for tok, _ in tokens)
    assert module.value_problem("plain", {"value"}) is None
    assert module.value_problem("Plain_Name", {"tag"}) is None
    assert module.parse_error(sample["reference"]) is None
    assert isinstance(module.line_signature(sample["reference"].split("\n")[1]), str)
    # compare_structure: a document has its own skeleton; one without its last line has not.
    assert module.compare_structure(sample["reference"], sample["reference"]) == []
    shorter = sample["reference"].rsplit("\n", 1)[0]
    try:
        problems = module.compare_structure(sample["reference"], shorter)
    except ReadError:
        problems = ["unreadable"]
    assert problems and all(isinstance(p, (formats.Problem, str)) for p in problems)
