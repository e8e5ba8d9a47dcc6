"""The results browser driven in a real headless browser (Debian's chromium): tests/report/test_browser.py and the
demo's click-through in tests/workflow/test_workflow.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def driver():
    pytest.importorskip("selenium", reason="selenium is in the test extra: `make test` installs it")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip("no chromium/chromedriver on this machine (CI installs Debian's chromium and chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000", "--allow-file-access-from-files"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


#: Where `arguments[0]` is and whether a click at its centre reaches it (not a row or cell drawn over it).
_PLACE = """
const e = arguments[0], box = e.getBoundingClientRect();
const top = box.width && box.height ? document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2) : null;
return [box.left, box.top, box.width, box.height, top !== null && (top === e || e.contains(top))];
"""


def click_settled(wait, xpath: str) -> None:
    """Click the element at `xpath` once the page has settled around it: found afresh on each look (a
    re-drawn table replaces its rows), in the same place on two looks in a row, and what a click at its centre reaches.
    Snakemake's report app draws its tables in with a transition, and a click during one lands on the cell passing
    over the link (ElementClickInterceptedException, seen in CI). Decided by the page's state, not by a pause: the
    wait's timeout only bounds how long a page that never settles is given."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    last: list[object] = [None]

    def settled(browser):
        try:
            element = browser.find_element(By.XPATH, xpath)
            place = browser.execute_script(_PLACE, element)
        except (StaleElementReferenceException, IndexError):
            return False
        ready = place[4] and place == last[0]
        last[0] = place
        return element if ready else False

    wait.until(settled).click()


#: The overview's layout at the window's width: the page's width against its client width, every element that reaches
#: past the client's right edge, every element that scrolls sideways in a box of its own (none may: the whole page
#: fits), and what the reader sees of the legend and the numbers' headers.
LAYOUT = """
const page = document.documentElement, right = page.clientWidth;
const all = [...document.querySelectorAll('body *')];
const name = e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ': ' + e.textContent.slice(0, 40);
const legend = document.getElementById('legend');
return {window: window.innerWidth, page_scroll: page.scrollWidth, page_client: right,
  beyond: all.filter(e => e.getBoundingClientRect().right > right + 1).slice(0, 5).map(name),
  scrollers: all.filter(e => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map(name),
  legend: legend ? legend.innerText : '',
  headers: [...document.querySelectorAll('table.numbers tr:first-child th')].map(th => th.innerText.replace(/\\s+/g, ' ').trim()),
  title: document.title, text: document.body.innerText};
"""


def overview(browser, site_dir: Path, shot: Path | None = None) -> dict[str, object]:
    """The site's overview opened in `browser`: its LAYOUT, and a screenshot where `shot` is given."""
    browser.get((site_dir / "index.html").resolve().as_uri())
    layout = browser.execute_script(LAYOUT)
    if shot is not None:  # the whole page, as tall as it is (the window's width unchanged)
        shot.parent.mkdir(parents=True, exist_ok=True)
        size = browser.get_window_size()
        browser.set_window_size(
            size["width"], size["height"] + browser.execute_script("return document.documentElement.scrollHeight - window.innerHeight")
        )
        browser.save_screenshot(str(shot))
        browser.set_window_size(size["width"], size["height"])
    return layout


def click_through(site_dir: Path, shots: Path, browser=None) -> dict[str, object]:
    """Overview -> a model's refusal items -> one item; returns what the browser showed. A browser given is left open."""
    from selenium.webdriver.common.by import By

    shots.mkdir(parents=True, exist_ok=True)
    own = browser is None
    browser = driver() if own else browser
    try:
        layout = overview(browser, site_dir, shots / "1-overview.png")
        browser.find_element(By.CSS_SELECTOR, 'a[href$="/honest/64.html#refusal"]').click()
        rows = [row for row in browser.find_elements(By.CSS_SELECTOR, "tr.item") if row.is_displayed()]
        browser.save_screenshot(str(shots / "2-list.png"))
        rows[0].find_element(By.TAG_NAME, "a").click()
        thumbs = browser.find_elements(By.CSS_SELECTOR, "#level-64 .thumb")
        browser.save_screenshot(str(shots / "3-item.png"))
        return {
            "title": browser.title,
            "text": browser.find_element(By.TAG_NAME, "body").text,
            "listed": len(rows),
            "thumbs": len(thumbs),
            "marked": len(browser.find_elements(By.CSS_SELECTOR, "#level-64 .thumb.evidence")),
            "image": thumbs[0].find_element(By.TAG_NAME, "div").value_of_css_property("background-image") if thumbs else "",
            "focused": len(browser.find_elements(By.CSS_SELECTOR, "tr.answer.focus")),
            "layout": layout,
        }
    finally:
        if own:
            browser.quit()
