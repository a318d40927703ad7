"""``index.html`` in a real browser (Playwright driving Debian's chromium) at a 1400 px wide window.

Every table cell is on screen or inside a wrapper that scrolls sideways, the wide scorecard fits
whole, Markdown-sourced prose is rendered (no literal backticks) and text that came from PDFs or
replies stays literal: no script runs, no handler attribute, no ``javascript:`` link, no image
from outside the page.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from nclue.report.html import markdown_inline, table_html, write_html
from nclue.report.plots import scorecard_plot
from nclue.scoring.results import RunSummary
from nclue.tables import Table

CHROMIUM = Path("/usr/bin/chromium")
VIEWPORT = {"width": 1400, "height": 900}
HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
    "![pixel](http://example.invalid/p.png)"
)
NOTE = (
    "Table S2a (paraphrase probe): no `SYSTEM@paraphrase` runs. Fill the release's frozen cache with "
    "`nclue bench paraphrase BENCH --endpoint URL --model MODEL`, then `nclue report` again."
)


def _scorecard() -> Table:
    """The shape of the demo's Table S1: ten columns, long system names, Gold+Support last."""
    names = [
        "rrf(bm25.decompose(distinct), dense.decompose(distinct))",
        "rerank(bm25.decompose(distinct), minilm, pool=100)",
        "struct.decompose(product)",
    ] + [f"bm25.variant_{i}(hmean)" for i in range(20)]
    rows = tuple(
        (str(i), n, "DEC", "98.4", "[95.9, 100.0]", "100.0", "96.2", "73.9", "0.0/1.6/98.4", "49.7")
        for i, n in enumerate(names, start=1)
    )
    headers = (
        "Rank",
        "System",
        "Cat.",
        "n-Clue Score",
        "Exact-family 95% CI",
        "Gold Hit",
        "Gold-NDCG",
        "Graded NDCG",
        "M/P/G",
        "Gold+Support",
    )
    caption = "Fair systems of form `clean_v2` ranked by n-Clue Score@10; percentage points."
    return Table(headers, rows, "rlcrcrrrcr", caption, number="S1")


def _very_wide() -> Table:
    """Wider than any window: 24 interval columns."""
    headers = ("Contrast", *(f"Crossed all-judged 95% CI {i}" for i in range(24)))
    rows = tuple(
        (f"Complementarity: rrf(bm25.and, dense.joint(ptop3)) − dense.joint(ptop{k})", *(["[+32.71, +53.66]"] * 24))
        for k in range(4)
    )
    return Table(headers, rows, "l" + "c" * 24, "Shared-document stress checks (pp).")


def _hostile() -> Table:
    return Table(("Label", "Target (doc_id)"), (("Gold g=3", HOSTILE),), "ll", f"Query q1 ({HOSTILE}).", number="S6")


@pytest.fixture
def page_html(tmp_path: Path) -> Path:
    summary = {
        n: RunSummary(n, s, 80.0, 50.0, 50.0, 20.0, 80.0 - s, s, ci={"n_clue_score": (s - 3, s + 3)})
        for n, s in (("bm25.and", 26.8), ("fusion", 31.0))
    }
    scorecard_plot(summary, tmp_path / "scorecard")
    report = SimpleNamespace(
        queries=183,
        families=30,
        k=10,
        bootstrap=1000,
        draws=10000,
        seed=11,
        shift=SimpleNamespace(reversals=("`bm25.and` reverses between benchmarks: +1.0 points, −2.0 on SourceShift.",)),
    )
    sections = [
        ("table_s1_scorecard", "Scorecard (Table S1)", _scorecard()),
        ("table_shared_documents", "Shared-document stress checks", _very_wide()),
        ("table_s6_label_example", "Label example (Table S6)", _hostile()),
    ]
    notes = [NOTE, f"Label figure (Table S6) not rendered: {HOSTILE}"]
    return write_html(report, sections, [("scorecard.png", "Fair systems ranked.")], notes, tmp_path)


def test_markdown_is_rendered_and_html_stays_text() -> None:
    assert markdown_inline("run `nclue report` *again*") == "run <code>nclue report</code> <em>again</em>"
    hostile = markdown_inline(HOSTILE)
    assert "<script" not in hostile and "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile
    assert "<img" not in hostile and "&lt;img src=x onerror=alert(2)&gt;" in hostile
    assert "[click](javascript:alert(3))" in hostile  # an unsafe link target stays text
    assert 'href="javascript' not in hostile and "!" + '<a href="http://example.invalid/p.png">pixel</a>' in hostile
    cell = table_html(_hostile())
    assert "<script" not in cell and "<img" not in cell and "&lt;script&gt;" in cell
    assert '<p class="caption">Table S6. Query q1 (' in cell


def test_html_report_fits_a_1400px_window_and_renders_markdown(page_html: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    dialogs: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(page_html.as_uri())
        width = page.evaluate("() => window.innerWidth")
        cells = page.evaluate(
            """() => [...document.querySelectorAll('td, th')].map(cell => {
                const wrap = cell.closest('.wrap');
                const box = wrap ? wrap.getBoundingClientRect() : null;
                return {
                    table: cell.closest('section').id,
                    text: cell.textContent,
                    right: cell.getBoundingClientRect().right,
                    wrapRight: box ? box.right : null,
                    scrolls: wrap ? ['auto', 'scroll'].includes(getComputedStyle(wrap).overflowX)
                                    && wrap.scrollWidth > wrap.clientWidth : false,
                };
            })"""
        )
        page_width = page.evaluate("() => document.documentElement.scrollWidth")
        wide = page.locator("#table_shared_documents .wrap")
        wide.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
        after = page.evaluate(
            """() => {
                const wrap = document.querySelector('#table_shared_documents .wrap');
                const heads = wrap.querySelectorAll('th');
                return {wrapLeft: wrap.getBoundingClientRect().left,
                        first: heads[0].getBoundingClientRect().left,
                        last: heads[heads.length - 1].getBoundingClientRect().right};
            }"""
        )
        prose = page.evaluate(
            "() => [...document.querySelectorAll('.caption, #skipped li, #reversals li')].map(e => e.innerText)"
        )
        codes = page.evaluate("() => [...document.querySelectorAll('#skipped code')].map(e => e.textContent)")
        hostile = page.evaluate(
            """() => ({
                scripts: document.querySelectorAll('script').length,
                handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
                js: document.querySelectorAll('a[href^="javascript:"]').length,
                images: [...document.images].map(i => i.getAttribute('src').slice(0, 22)),
                loaded: [...document.images].every(i => i.complete && i.naturalWidth > 0),
                text: document.body.innerText,
            })"""
        )
        browser.close()
    assert width == VIEWPORT["width"] and page_width <= width  # the page itself never scrolls sideways
    for cell in cells:
        on_screen = cell["right"] <= width + 0.5
        assert on_screen or (cell["scrolls"] and cell["wrapRight"] <= width + 0.5), cell
    scorecard = [c for c in cells if c["table"] == "table_s1_scorecard"]
    assert {c["text"] for c in scorecard} >= {"Gold+Support", "49.7"}
    assert all(c["right"] <= c["wrapRight"] + 0.5 and not c["scrolls"] for c in scorecard)  # it fits whole
    assert any(c["scrolls"] for c in cells if c["table"] == "table_shared_documents")
    assert after["last"] <= width and abs(after["first"] - after["wrapLeft"]) < 1  # scrolled: first column sticks
    assert prose and not any("`" in text for text in prose), prose
    assert "nclue bench paraphrase BENCH --endpoint URL --model MODEL" in codes and "SYSTEM@paraphrase" in codes
    assert hostile["scripts"] == 0 and hostile["handlers"] == 0 and hostile["js"] == 0 and dialogs == []
    assert hostile["images"] == ["data:image/png;base64,"] and hostile["loaded"]
    assert hostile["text"].count("<script>alert(1)</script>") == 3  # caption, cell and note, shown as text
    assert "<img src=x onerror=alert(2)>" in hostile["text"] and "[click](javascript:alert(3))" in hostile["text"]
