"""The packet in a real browser: Playwright driving Debian's chromium (installed by `make test`'s system-deps).

Answers every item of a packet built from a real release, triggers every validation error,
reloads (autosave) and resumes from an export (import), exports two evaluators with known
disagreements and checks that the exports score to exactly the expected tables. A packet whose
pages carry ``<script>``, ``<img onerror>`` and ``</textarea>`` shows them as text. With
``NCLUE_AUDIT_SCREENSHOTS=DIR`` the packet and the adjudication poll are also saved as
``DIR/audit-packet.png`` and ``DIR/audit-poll.png`` (the images in ``docs/img``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from nclue.audit.audit_params import SampleParams
from nclue.audit.export import read_export
from nclue.audit.packet import build_packet
from nclue.audit.quote_match import quote_problem, verbatim
from nclue.audit.repair import repair
from nclue.audit.sample import sample
from nclue.audit.score import score
from nclue.audit.store import AuditDir
from tests.audit.simulate import answers, hostile_release, payload_of, write_export

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FLIPS = {(0, 1), (2, 0), (5, 0), (7, 1)}
SHOTS = os.environ.get("NCLUE_AUDIT_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        pytest.fail("Debian's chromium is missing: run `make system-deps` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield browser
        browser.close()


def open_packet(browser, path: Path):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    page.errors = errors
    return context, page


def tid(page, name: str):
    return page.locator(f"[data-testid='{name}']")


def errors_shown(page) -> list[str]:
    return [e.strip() for e in tid(page, "errors").locator("li").all_inner_texts()]


def fill_item(page, planned: dict) -> None:
    """Answer the current item as planned (a simulated evaluator's export item)."""
    for j, cond in enumerate(planned["conditions"], start=1):
        if cond["answer"]:
            tid(page, f"yes-{j}").check()
            for e in cond["evidence"]:
                tid(page, f"select-{j}-{e['page']}").check()
                tid(page, f"quote-{j}-{e['page']}").fill(e["quote"])
        else:
            tid(page, f"no-{j}").check()


def lf(conditions: list[dict]) -> list[dict]:
    """Conditions with ``\r\n`` line endings of quotes written as ``\n`` (what a form field keeps)."""
    return [
        {**c, "evidence": [{**e, "quote": e["quote"].replace("\r\n", "\n")} for e in c["evidence"]]} for c in conditions
    ]


def export(page, target: Path) -> Path:
    with page.expect_download() as info:
        tid(page, "export").click()
    info.value.save_as(target)
    return target


def test_answer_validate_autosave_resume_export_and_score(browser, audited: dict, tmp_path: Path) -> None:
    audit = AuditDir.open(audited["audit"])
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    plan_a, plan_e = answers(payload), answers(payload, FLIPS)
    context, page = open_packet(browser, audited["html"])
    tid(page, "evaluator").fill("A")
    assert tid(page, "item-title").inner_text() == "Item 1 of 12"

    # every validation error, on the first item
    first = payload["items"][0]
    tid(page, "accept").click()
    assert errors_shown(page) == [
        f"Condition {j} (“{c['name']}”): answer Established or Not established"
        for j, c in enumerate(first["conditions"], start=1)
    ]
    c1, c2 = first["conditions"][0], first["conditions"][1]
    p1, p2 = c1["pages"][0], c2["pages"][0]
    tid(page, "yes-1").check()
    tid(page, "no-2").check()
    tid(page, "accept").click()
    assert (
        f"Condition 1 (“{c1['name']}”): answered Established but no page is selected; select the page(s) that establish it"
        in errors_shown(page)
    )
    tid(page, f"select-1-{p1['page']}").check()
    tid(page, "accept").click()
    assert f"Condition 1 (“{c1['name']}”): page {p1['page']}: the quote is empty" in errors_shown(page)
    tid(page, f"quote-1-{p1['page']}").fill("abc")
    tid(page, "accept").click()
    assert any("the quote has 3 characters; quote at least 12" in e for e in errors_shown(page))
    tid(page, f"quote-1-{p1['page']}").fill("words that are nowhere on this page at all")
    tid(page, "accept").click()
    assert any("the quote is not on the page; copy the words exactly" in e for e in errors_shown(page))
    tid(page, f"select-2-{p2['page']}").check()
    tid(page, "accept").click()
    assert (
        f"Condition 2 (“{c2['name']}”): answered Not established but page(s) {p2['page']} are selected; clear them or answer Established"
        in errors_shown(page)
    )
    assert tid(page, "item-status").inner_text().startswith("in progress")

    # normalisation parity: a quote with other case, spacing and line breaks is accepted in both places
    words = " ".join(p1["text"].split()[:8])
    mangled = "  " + words.upper().replace(" ", " \n\t ") + " "
    assert (quote_problem(mangled, p1["text"]) is None) == (len(words) >= 12)
    tid(page, f"quote-1-{p1['page']}").fill(mangled)
    tid(page, f"select-2-{p2['page']}").uncheck()
    # "Use selected text" copies a selection inside the page text into the quote
    page.evaluate(
        """(card) => { const pre = document.querySelector(`[data-testid='${card}'] pre`);
                       const r = document.createRange(); r.selectNodeContents(pre.firstChild);
                       r.setEnd(pre.firstChild, Math.min(40, pre.firstChild.length));
                       const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); }""",
        f"page-1-{p1['page']}",
    )
    tid(page, f"use-selection-1-{p1['page']}").click()
    selected = tid(page, f"quote-1-{p1['page']}").input_value()
    assert len(selected) >= 12 and verbatim(selected, p1["text"])
    tid(page, f"quote-1-{p1['page']}").fill(mangled)

    # always-live navigation and the keyboard: an unfinished item can be left and revisited
    page.locator("body").click(position={"x": 5, "y": 200})
    page.keyboard.press("ArrowRight")
    assert tid(page, "item-title").inner_text() == "Item 2 of 12"
    page.keyboard.press("ArrowLeft")
    assert tid(page, "item-title").inner_text() == "Item 1 of 12"
    assert tid(page, f"quote-1-{p1['page']}").input_value() == mangled  # autosaved draft
    tid(page, "prev").click()
    assert tid(page, "item-title").inner_text() == "Item 1 of 12"

    # answer every item as evaluator A, accepting with the Enter key
    tid(page, f"select-1-{p1['page']}").uncheck()
    for i, planned in enumerate(plan_a):
        assert tid(page, "item-title").inner_text() == f"Item {i + 1} of 12"
        fill_item(page, planned)
        if i == 6:  # autosave survives a reload mid-way
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            assert tid(page, "progress").inner_text() == "Accepted 6 of 12 · 1 in progress"
            assert tid(page, "evaluator").input_value() == "A"
        page.locator("body").click(position={"x": 5, "y": 200})
        page.keyboard.press("Enter")
        assert not errors_shown(page), errors_shown(page)
    assert tid(page, "progress").inner_text() == "Accepted 12 of 12"
    path_a = export(page, tmp_path / "A.json")
    assert read_export(path_a, audit).items.keys() == {it["id"] for it in payload["items"]}
    assert not page.errors
    context.close()

    # resume elsewhere: a fresh browser profile imports the export; a foreign or edited file is refused
    context, page = open_packet(browser, audited["html"])
    assert tid(page, "progress").inner_text() == "Accepted 0 of 12"
    edited = json.loads(path_a.read_text())
    edited["items"][0]["conditions"][0]["answer"] = not edited["items"][0]["conditions"][0]["answer"]
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    tid(page, "import").set_input_files(str(tmp_path / "edited.json"))
    expect(tid(page, "progress")).to_contain_text("in progress")
    assert any("edited after it was written" in e for e in errors_shown(page))
    foreign = dict(json.loads(path_a.read_text()), packet_id="0000000000000000")
    (tmp_path / "foreign.json").write_text(json.dumps(foreign))
    tid(page, "import").set_input_files(str(tmp_path / "foreign.json"))
    expect(tid(page, "errors")).to_contain_text("belongs to packet")
    tid(page, "import").set_input_files(str(path_a))
    expect(tid(page, "progress")).to_have_text("Accepted 12 of 12")
    context.close()

    # evaluator E, with known disagreements, in the same packet
    context, page = open_packet(browser, audited["html"])
    tid(page, "evaluator").fill("E")
    for planned in plan_e:
        fill_item(page, planned)
        tid(page, "accept").click()
    path_e = export(page, tmp_path / "E.json")
    context.close()

    report = score(audited["audit"], [path_a, path_e]).to_json()
    pair = report["pairs"][0]
    n_cond = sum(len(it["conditions"]) for it in payload["items"])
    assert pair["condition_agreement"]["hits"] == n_cond - len(FLIPS)
    ga = [sum(c["answer"] for c in it["conditions"]) for it in plan_a]
    ge = [sum(c["answer"] for c in it["conditions"]) for it in plan_e]
    table = np.zeros((4, 4), dtype=int)
    for x, y in zip(ga, ge):
        table[x, y] += 1
    assert pair["grade_confusion"] == table.tolist()
    assert pair["grade_agreement"]["hits"] == sum(x == y for x, y in zip(ga, ge))
    written = json.loads(path_e.read_text())
    assert [lf(it["conditions"]) for it in written["items"]] == [lf(it["conditions"]) for it in plan_e]

    if SHOTS:
        shots = Path(SHOTS)
        shots.mkdir(parents=True, exist_ok=True)
        context, page = open_packet(browser, audited["html"])
        tid(page, "evaluator").fill("A")
        item = next(
            i
            for i, it in enumerate(plan_a)
            if sum(c["answer"] for c in it["conditions"]) == 1 and len(it["conditions"]) == 2
        )
        page.locator("#jump-summary").click()
        tid(page, f"jump-{item + 1}").click()
        fill_item(page, plan_a[item])
        page.locator("#jump-summary").click()
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(shots / "audit-packet.png"), full_page=True)
        context.close()


def test_page_text_never_runs(browser, tmp_path: Path) -> None:
    coll, bench = hostile_release(tmp_path)
    sample(bench, tmp_path / "audit", SampleParams(pairs=1))
    build_packet(tmp_path / "audit", coll, tmp_path / "p.html")
    context, page = open_packet(browser, tmp_path / "p.html")
    assert page.evaluate("window.__pwned") is None
    texts = page.locator("pre.page-text").all_text_contents()
    assert any("<script>window.__pwned = 1</script>" in t for t in texts)
    assert any('<img src=x onerror="window.__pwned = 2">' in t and "</textarea><b>bold</b>" in t for t in texts)
    assert page.locator("main img").count() == 0 and page.locator("pre.page-text b").count() == 0
    assert page.locator("textarea").count() == sum(1 for _ in page.locator("article.page").all())
    page.wait_for_timeout(100)
    assert page.evaluate("window.__pwned") is None and not page.errors
    context.close()


def test_adjudication_poll_in_the_browser(browser, fresh_audit: dict, tmp_path: Path) -> None:
    payload = payload_of(fresh_audit["audit"], fresh_audit["packet"].packet_id)
    a = write_export(tmp_path / "A.json", payload, "A", answers(payload))
    e = write_export(tmp_path / "E.json", payload, "E", answers(payload, FLIPS))
    report = repair(fresh_audit["audit"], [a, e], fresh_audit["coll"], tmp_path / "poll.html")
    context, page = open_packet(browser, tmp_path / "poll.html")
    poll = payload_of(fresh_audit["audit"], report.poll.packet_id)
    assert page.locator("h1").inner_text() == "Evidence poll"
    first = poll["items"][0]["conditions"][0]
    assert page.locator("[data-testid='cond-1'] article.page").count() == len(first["pages"]) >= 6
    assert tid(page, "evaluator").input_value() == "" and not tid(page, "evaluator").get_attribute("readonly")
    if SHOTS:
        tid(page, "evaluator").fill("F")
        page.locator("#help-toggle").click()
        page.screenshot(path=str(Path(SHOTS) / "audit-poll.png"), full_page=True)
    assert not page.errors
    context.close()
