"""What Home says of the benchmarks, one HTML block (issue 46): a card each with its name, its summary and a
link to each page where its work is done, every text shown as it is."""

from lxml import html as lxml_html

from structext_core.studio.access import HomePlace, HomeSection
from structext_core.views.home_cards import benchmark_cards_html


def test_each_benchmark_is_a_card_with_its_places_linked_and_every_text_escaped():
    sections = [HomeSection("<b>Bench</b>", "Asks **this** & that <script>x()</script>",
                            (HomePlace("Explore", "explore", "its <i>items</i>"),
                             HomePlace("Results", "results?benchmark=b&x=1", "its scores"))),
                HomeSection("Empty", "Nothing to open.", ())]
    made = benchmark_cards_html(sections)
    tree = lxml_html.fromstring(f"<div>{made}</div>")
    cards = tree.xpath('//div[@data-testid="sxBenchmark"]')
    assert [c.xpath("./h4")[0].text_content() for c in cards] == ["<b>Bench</b>", "Empty"]  # text, never markup
    assert cards[0].xpath("./p")[0].text_content() == "Asks **this** & that <script>x()</script>"
    assert not tree.xpath("//script") and not tree.xpath("//b") and not tree.xpath("//i")
    assert [(a.text_content(), a.get("href")) for a in cards[0].iter("a")] == [
        ("Explore", "explore"), ("Results", "results?benchmark=b&x=1")]
    assert [li.text_content() for li in cards[0].iter("li")] == ["Explore: its <i>items</i>.", "Results: its scores."]
    assert not cards[1].xpath(".//ul")  # a role that may open none of its pages reads its summary alone
