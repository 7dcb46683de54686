#!/usr/bin/env python3
"""The flame-graph page's views in a real browser (web/js/sandwich.js,
docs/web-ui.md "Views"): a function's sandwich opened by real clicks (a
frame, then the bar's Sandwich button; a top-table row switching it),
and the stacks through a function (from a frame's right-click menu) and
hidden frames kept in the URL across a reload.  Screenshots of each view go to OUT_DIR/CASE/.

Usage: test_web_views.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE
"""
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_web  # noqa: E402
from test_web import Browser, Server, check, pct_of, push_shop, table_rows, wait_for  # noqa: E402


def url_state(b):
    return urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query)


def drawn(b, name, graph="flame"):
    return b.js("return window.ember.%s.frameRect(arguments[0])" % graph, name)


def click_row(b, name):
    rows = [tr for tr in b.els("#top tbody tr") if tr.find_elements("css selector", "td")[0].text == name]
    check(rows, "no top-table row %s: %s" % (name, table_rows(b)))
    rows[0].click()


def test_web__sandwich_after_clicking_a_frame_and_a_table_row():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop",version="1"}')
        b.click_frame("handle")
        wait_for("handle picked", lambda: b.text("#views-picked") == "Function: handle")
        b.el("#views-sandwich").click()
        b.rendered("sandwich")
        check(url_state(b).get("sandwich") == ["handle"], "the URL: %s" % url_state(b))
        check(not b.el("#flame").is_displayed() and b.el("#sandwich").is_displayed(),
              "the sandwich in place of the whole graph")
        # callers above the function (main over handle), callees below it
        main, handle = b.frame("main", "callers"), b.frame("handle", "callers")
        check(main["y"] < handle["y"], "callers: main above handle: %s %s" % (main, handle))
        check(not drawn(b, "idle", "callers") and not drawn(b, "idle", "callees"),
              "idle never calls nor is called by handle")
        top_, slow = b.frame("handle", "callees"), b.frame("slow_path", "callees")
        check(slow["y"] > top_["y"], "callees: slow_path below handle")
        check(top_["y"] > handle["y"], "the callees' graph under the callers'")
        tip = b.hover("slow_path", "callees")
        check(abs(pct_of(tip, "total") - 100 / 3) < 0.01, "slow_path is a third of handle: %r" % tip)
        check("handle: total 3.00 s" in b.text("#sandwich-status"), b.text("#sandwich-status"))
        b.shot("sandwich-handle")
        # a row of the top table: the sandwich of that function
        click_row(b, "parse")
        b.rendered("sandwich", 2)
        wait_for("the sandwich of parse", lambda: url_state(b).get("sandwich") == ["parse"]
                 and b.text("#sandwich-title") == "Sandwich of parse")
        wait_for("parse's callers", lambda: drawn(b, "handle", "callers") and drawn(b, "main", "callers")
                 and not drawn(b, "slow_path", "callers") and not drawn(b, "slow_path", "callees"))
        b.shot("sandwich-parse")
        b.el("#sandwich-close").click()
        wait_for("the whole graph back", lambda: b.el("#flame").is_displayed() and not b.el("#sandwich").is_displayed())
        check("sandwich" not in url_state(b), "the URL: %s" % url_state(b))
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__through_and_hide_in_the_url_survive_a_reload():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop",version="1"}')
        # a frame's context menu: a real right-click on it
        from selenium.webdriver.common.action_chains import ActionChains
        b.hover("slow_path")
        ActionChains(b.d).context_click().perform()
        menu = wait_for("the frame's menu", lambda: b.el("#views-menu").is_displayed() and b.el("#views-menu"))
        check(b.text("#views-picked") == "Function: slow_path", b.text("#views-picked"))
        b.shot("context-menu")
        menu.find_element("css selector", '[data-views="through"]').click()
        b.rendered("flame", 2)
        check(not b.el("#views-menu").is_displayed(), "the menu closed")
        wait_for("only the stacks through slow_path",
                 lambda: sorted(r[0] for r in table_rows(b)) == ["handle", "main", "slow_path"])
        check(not drawn(b, "idle") and drawn(b, "slow_path"), "idle drawn through slow_path")
        b.shot("through-slow_path")
        hide = b.el("#views-hide")
        hide.clear()
        hide.send_keys(r"hand\w+")  # RE2, matched whole
        b.el("#views-apply").click()
        b.rendered("flame", 3)
        wait_for("handle hidden", lambda: sorted(r[0] for r in table_rows(b)) == ["main", "slow_path"])
        main, slow = b.frame("main"), b.frame("slow_path")
        # the root on top (the default): slow_path the row right under main
        check(slow["y"] - main["y"] == main["h"], "slow_path right under main, handle hidden: "
              "%s %s" % (main, slow))
        q = url_state(b)
        check(q.get("through") == ["slow_path"] and q.get("hide") == [r"hand\w+"], "the URL: %s" % q)
        check("only stacks through slow_path" in b.text("#views-active"), b.text("#views-active"))
        url = b.d.current_url
        b.quit()
        b = Browser()
        b.open(url)
        b.rendered()
        st = b.js("return window.ember.state()")
        check(st["through"] == "slow_path" and st["hide"] == r"hand\w+", "state: %s" % st)
        check(b.el("#views-through-name").get_attribute("value") == "slow_path" and
              b.el("#views-hide").get_attribute("value") == r"hand\w+", "inputs restored")
        wait_for("the views restored", lambda: sorted(r[0] for r in table_rows(b)) == ["main", "slow_path"])
        check(not drawn(b, "handle") and not drawn(b, "idle"), "handle and idle still away")
        rows = {r[0]: r for r in table_rows(b)}
        check(rows["slow_path"][2] == "100.00%", "slow_path is all that is left: %s" % rows)
        b.shot("restored")
        b.el("#views-clear").click()
        b.rendered("flame", 2)
        wait_for("every function back",
                 lambda: sorted(r[0] for r in table_rows(b)) == ["handle", "idle", "main", "parse", "slow_path"])
        check("through" not in url_state(b) and "hide" not in url_state(b), "the URL: %s" % url_state(b))
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


if __name__ == "__main__":
    sys.exit(test_web.main(globals()))
