"""Tasks 8-17: JSON and YAML, the same five tasks on the same nested objects (``id``, fields, ``subs``)."""

from __future__ import annotations

import random
from typing import Callable

from structext_core.structext_eval.formats import Document, ReadError, json_format, yaml_format
from structext_core.structext_eval.tasks._common import find_node, no_params, question_match, true_false, value_sample
from structext_core.structext_eval.tasks._registry import Task, register


def _object_sample(rng: random.Random, doc: Document) -> dict:
    return {"id": rng.choice(list(doc.tree.walk())).name}


def _access_path(doc: Document, value: str) -> str:
    for node in doc.tree.walk():
        if value not in node.values:
            continue
        for key, v in node.fields:
            if v == value:
                steps = "".join(f'["subs"][{n.child_position()}]' for n in node.path()[1:])
                return f'obj{steps}["{key}"]'
    raise AssertionError("sampled a missing value")


def _deepest(doc: Document, render_one: Callable) -> str:
    nodes = list(doc.tree.walk())
    depth = max(n.level for n in nodes)  # the root is at level 0: its height, without a recursion
    return "\n\n".join(render_one(n) for n in nodes if n.level == depth)


def _structured_tasks(module, first_id: int, label: str, error_hint: str) -> None:
    def spans(reference: str):
        return module.objects(reference)

    def by_id(reference: str, p: dict, d: int, w: int) -> str:
        for span in spans(reference):
            if str(span.value.get("id")) == p["id"]:
                return module.excerpt(reference, span)
        raise ReadError(f"no object has id {p['id']!r}")

    def deepest(reference: str, p: dict, d: int, w: int) -> str:
        found = spans(reference)
        if not found:
            raise ReadError("the document holds no object")
        top = max(s.nesting for s in found)
        return "\n\n".join(module.excerpt(reference, s) for s in found if s.nesting == top)

    def first_child(reference: str, p: dict, d: int, w: int) -> str:
        root = spans(reference)[0].value if spans(reference) else None
        subs = root.get("subs") if isinstance(root, dict) else None
        if not subs or not isinstance(subs[0], dict) or "id" not in subs[0]:
            raise ReadError("the outermost object has no first object in subs")
        return str(subs[0]["id"])

    def access(reference: str, p: dict, d: int, w: int) -> str:
        found = spans(reference)
        path = json_format.find_value_path(found[0].value, p["value"]) if found else None
        if path is None:
            raise ReadError(f"no field holds the value {p['value']!r}")
        return path

    render_excerpt = (lambda n: json_format.render(n)) if module is json_format else (lambda n: yaml_format.render(n))
    excerpt_req = f"The content should be an excerpt as it appears in the {label} file."
    register(Task(
        first_id, module.LANGUAGE, "TextRetrieval", f"{module.LANGUAGE}-object-by-id", 0,
        requirement=excerpt_req,
        rule_hint="Walk the objects from the outermost one down through every subs list and stop at the object "
                  "whose id is the one asked for; copy that object's lines, with everything nested in it.",
        sample=_object_sample,
        question=lambda p: f"What is the object with id {p['id']}?",
        expected=lambda doc, p: render_excerpt(find_node(doc, p["id"])),
        parse=lambda q: {"id": question_match(r"object with id (.+?)\s*\?", q, "an id").group(1)},
        solve=by_id,
    ))
    register(Task(
        first_id + 1, module.LANGUAGE, "PathWalk", f"{module.LANGUAGE}-first-child-id", 1,
        requirement="Answer the id only.",
        rule_hint="Take the outermost object, open its subs list, take the first object in it and read its id.",
        sample=lambda rng, doc: {},
        question=lambda p: "What is the first object's id of subs?",
        expected=lambda doc, p: doc.tree.children[0].name,
        parse=no_params,
        solve=first_child,
    ))
    register(Task(
        first_id + 2, module.LANGUAGE, "Syntax", f"{module.LANGUAGE}-structural-error", 2,
        requirement="Answer 'True' if there is a structural error and 'False' if there is none.",
        rule_hint=error_hint,
        sample=lambda rng, doc: {},
        question=lambda p: f"Is there any structural error in this {label}?",
        expected=lambda doc, p: true_false(not module.parses(doc.reference)),
        parse=no_params,
        solve=lambda ref, p, d, w: true_false(not module.parses(ref)),
        inject_errors=True,
    ))
    register(Task(
        first_id + 3, module.LANGUAGE, "PathCompose", f"{module.LANGUAGE}-access-path", 3,
        requirement="Answer should be like obj[key or index 1][key or index 2][key or index 3]...",
        rule_hint="Search the objects depth-first from the outermost one, following subs; in each object look at "
                  'every field except subs. Write the way down as ["subs"][index] steps and end with the key of '
                  "the field that holds the value.",
        sample=value_sample,
        question=lambda p: f'How to access value "{p["value"]}"?',
        expected=lambda doc, p: _access_path(doc, p["value"]),
        parse=lambda q: {"value": question_match(r'access value "(.+?)"\s*\?', q, "a quoted value").group(1)},
        solve=access,
    ))
    register(Task(
        first_id + 4, module.LANGUAGE, "TextRetrieval", f"{module.LANGUAGE}-deepest-objects", 4,
        requirement=f"The content should be excerpts as they appear in the {label} file, separated by a blank line.",
        rule_hint="Follow the subs lists down from the outermost object; the objects at the deepest level (their "
                  "subs list is empty) are the answer, each copied as it appears, in document order.",
        sample=lambda rng, doc: {},
        question=lambda p: "What are the most deeply nested objects, i.e., objects whose subs list is empty?",
        expected=lambda doc, p: _deepest(doc, render_excerpt),
        parse=no_params,
        solve=deepest,
        answer_kind="blocks",
    ))


_structured_tasks(json_format, 8, "JSON",
                  "Parse the file as JSON: if the parser stops with an error, for example because a closing curly "
                  "brace is missing, there is a structural error.")
_structured_tasks(yaml_format, 13, "YAML",
                  "Parse the file as YAML: if the parser stops with an error, for example at a line that has a "
                  "colon but no key before it, there is a structural error.")
