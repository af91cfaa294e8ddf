"""Tasks 18-20: XML elements, their attributes and their nesting."""

from __future__ import annotations

from structext_core.structext_eval.formats import xml_format
from structext_core.structext_eval.tasks._common import no_params, question_match, true_false, value_sample
from structext_core.structext_eval.tasks._registry import Task, register

register(Task(
    18, "xml", "TextRetrieval", "xml-content-of-tag", 0,
    requirement="The content should be an excerpt as it appears in the XML file.",
    rule_hint="Find the start tag with the asked name and its matching end tag (the same name after a slash); "
              "everything between the two, child elements and text, is the content.",
    sample=lambda rng, doc: {"tag": rng.choice(list(doc.tree.walk())).tag},
    question=lambda p: f"What is the content of tag {p['tag']}?",
    expected=lambda doc, p: xml_format.render_content(next(n for n in doc.tree.walk() if n.tag == p["tag"])),
    parse=lambda q: {"tag": question_match(r"content of tag (.+?)\s*\?", q, "a tag").group(1)},
    solve=lambda ref, p, d, w: xml_format.content_of(ref, p["tag"]),
))

register(Task(
    19, "xml", "TextRetrieval", "xml-tag-of-attribute-value", 1,
    requirement="Answer the tag name only.",
    rule_hint="Search the file for the value inside the quotes of an attribute; the name right after the < that "
              "opens the same tag is the answer.",
    sample=value_sample,
    question=lambda p: f"What is the tag with attribute of value {p['value']}?",
    expected=lambda doc, p: next(n.tag for n in doc.tree.walk() if p["value"] in n.values),
    parse=lambda q: {"value": question_match(r"attribute of value (.+?)\s*\?", q, "a value").group(1)},
    solve=lambda ref, p, d, w: xml_format.tag_with_attribute_value(ref, p["value"]),
))

register(Task(
    20, "xml", "Syntax", "xml-structural-error", 2,
    requirement="Answer 'True' if there is a structural error and 'False' if there is none.",
    rule_hint="Parse the file as XML: every start tag needs its end tag, properly nested; if the parser stops, "
              "for example at a missing end tag, there is a structural error.",
    sample=lambda rng, doc: {},
    question=lambda p: "Is there any structural error in this XML?",
    expected=lambda doc, p: true_false(not xml_format.parses(doc.reference)),
    parse=no_params,
    solve=lambda ref, p, d, w: true_false(not xml_format.parses(ref)),
    inject_errors=True,
))
