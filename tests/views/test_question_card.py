"""A question as Adjudication shows it, one HTML block (issue 46): the reference beside the question, every
text shown exactly as it is (markup, Markdown and line breaks), the reference's lines numbered."""

from lxml import html as lxml_html

from structext_core.views.question_card import question_html


def test_the_question_is_shown_exactly_beside_its_numbered_reference():
    hostile = "Which <b>key</b> holds **x**?\n  [a link](http://x) & `y`"
    made = question_html(hostile, "<answer>", requirement="Answer with *one* word.",
                         reference='{"a": 1}\n<script>alert(1)</script>', reference_name="JSON <5>")
    assert "<script>" not in made and "<b>key" not in made
    tree = lxml_html.fromstring(made)
    side = tree.xpath('//div[@data-testid="sxQuestion"]')[0]
    reference, question = side.xpath("./div")  # two columns, the reference first
    assert reference.xpath("./p")[0].text_content() == "Reference · JSON <5>"
    assert [line.text_content() for line in reference.xpath('.//span[@class="sx-l"]')] == [
        '{"a": 1}', "<script>alert(1)</script>"]
    paragraphs = [p.text_content() for p in question.xpath("./p")]
    assert paragraphs == [f"Question: {hostile}", "Answer with *one* word.", "Answer key"]
    assert question.xpath(".//pre")[0].text_content() == "<answer>"
    assert "white-space:pre-wrap" in question.xpath("./p")[0].get("style")  # its line breaks kept


def test_without_a_reference_the_question_is_alone_and_an_empty_requirement_not_shown():
    made = question_html("How many?", "3")
    tree = lxml_html.fromstring(made)
    assert not tree.xpath('//*[@class="sx-side"]') and not tree.xpath('//*[@class="sx-l"]')
    assert [p.text_content() for p in tree.xpath("//p")] == ["Question: How many?", "Answer key"]
    # an empty reference is still a reference: its column is drawn, with no title beyond the word
    tree = lxml_html.fromstring(question_html("How many?", "3", reference=""))
    assert tree.xpath('//div[@class="sx-side"]/div/p')[0].text_content() == "Reference"
