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


#: The overview's layout: the page's width against the window's, and the first table's scroll box scrolled to its
#: right end (where its last level's header and the model column then are): the box is the table's parent.
LAYOUT = """
const page = document.documentElement, table = document.querySelector('table'), box = table.parentElement;
const heads = table.querySelectorAll('tr:first-child th'), last = heads[heads.length - 1];
const arm = table.querySelectorAll('tr')[2].firstElementChild;
const before = box.getBoundingClientRect();
box.scrollLeft = box.scrollWidth;
const inside = box.getBoundingClientRect(), head = last.getBoundingClientRect(), row = arm.getBoundingClientRect();
const seen = {window: window.innerWidth, page_scroll: page.scrollWidth, page_client: page.clientWidth,
  box_scroll: box.scrollWidth, box_client: box.clientWidth, box_right: before.right, last: last.textContent,
  last_inside: head.left >= inside.left - 1 && head.right <= inside.right + 1 && head.right <= window.innerWidth,
  arm_left: row.left - inside.left};
box.scrollLeft = 0;
return seen;
"""


def click_through(site_dir: Path, shots: Path) -> dict[str, object]:
    """Overview -> a model's refusal items -> one item; returns what the browser showed."""
    from selenium.webdriver.common.by import By

    shots.mkdir(parents=True, exist_ok=True)
    browser = driver()
    try:
        browser.get((site_dir / "index.html").resolve().as_uri())
        browser.save_screenshot(str(shots / "1-overview.png"))
        layout = browser.execute_script(LAYOUT)
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
        browser.quit()
