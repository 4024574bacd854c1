"""The spiderweb picture and the words around it: pure functions, no terminal."""

from __future__ import annotations

import pytest

from strata_daemon.faces.tui.format import node_short, node_text, nothing_reached
from strata_daemon.faces.tui.webpicture import draw

# Which way each drawing character joins: up and down.
UP = set("│┘└├┤┴┼╰╯")
DOWN = set("│┐┌├┤┬┼╭╮")
NEIGHBOURS = [("#2 Alice prefers tea over coffee in the morning", "1.000"), ("web-01 (host)", "mentions"),
              ("#3 the backup job on the home server runs at night", "0.512"), ("user.drink = coffee", "2.300"),
              ("#9 x", "0.100")]


def joined_up_and_down(lines: list[str]) -> bool:
    """Every line going down meets one coming up on the next row, and the other way round."""
    grid = [line.ljust(max(map(len, lines))) for line in lines]
    for above, below in zip(grid, grid[1:]):
        for a, b in zip(above, below):
            if (a in DOWN) != (b in UP) and (a in DOWN or b in UP):
                return False
    return True


def test_the_centre_is_boxed_in_the_middle_and_each_neighbour_is_joined_to_it_with_its_weight():
    lines = draw("#1 deployed web-01 with nginx 1.25 after error E502", NEIGHBOURS, width=120)
    assert "╭" in lines[0] and "╰" in lines[-1]
    text = "\n".join(lines)
    assert "#1 deployed web-01 with" in text
    for label, weight in NEIGHBOURS:
        assert label[:20] in text and f"─{weight}─" in text
    assert any(line.lstrip().startswith("#2 Alice prefers tea") for line in lines)  # the first on the left
    assert any(line.endswith("web-01 (host)") and "─mentions─" in line for line in lines)  # the second on the right
    middle = next(line for line in lines if "─┤" in line)
    assert "├─" in middle  # both sides' lines reach the box on the same row
    assert joined_up_and_down(lines)


@pytest.mark.parametrize("width", [40, 60, 80, 100, 130, 200])
def test_the_picture_fits_the_width_and_stays_joined(width):
    many = [(f"#{i} memory number {i} says something long enough to be cut", f"{i / 10:.3f}") for i in range(15)]
    lines = draw("#100 the centre of it all, which says a great deal more than fits in one box line", many,
                 width=width)
    assert all(len(line) <= width for line in lines), [len(line) for line in lines]
    assert lines[-1] == "+ 3 more not drawn"
    assert sum("─┐" in line or "─┘" in line or "─┤" in line or "─┼" in line for line in lines) == 6  # left side
    assert joined_up_and_down(lines[:-1])


def test_a_long_centre_is_wrapped_and_cut_after_three_lines():
    lines = draw("word " * 100, [("#2 a", "1.000")], width=80)
    inside = [line for line in lines if "│" in line or "┤" in line]
    assert len(inside) == 3 and inside[-1].rstrip().endswith("… │")


def test_a_lone_node_is_just_its_box():
    assert draw("#1 alone", []) == ["╭──────────╮", "│ #1 alone │", "╰──────────╯"]


def test_one_neighbour_is_one_straight_line():
    lines = draw("#1 a", [("#2 b", "1.000")], width=60)
    assert lines == ["              ╭──────╮", "#2 b ─1.000───┤ #1 a │", "              ╰──────╯"]


def test_nodes_read_as_text():
    assert node_text("episode:12", "the  backup\nruns") == "#12 the backup runs"
    assert node_text("fact:user.drink", "user.drink = tea") == "user.drink = tea"
    assert node_text("entity:host:web-01", "web-01") == "web-01 (host)"
    assert node_text("episode:99", None) == "episode:99"
    assert [node_short(n) for n in ("episode:3", "fact:user.drink", "entity:host:web-01")] == ["#3", "user.drink",
                                                                                                "web-01"]


def test_a_spread_that_reaches_nothing_says_why():
    rules = dict(threshold=0.15, cap=10.0, fan_out=False, link_weight=5.0)
    assert nothing_reached([], 0, **rules).startswith("it has no edges yet")
    assert "not followed (graph.link_weight is 0)" in nothing_reached([], 2, **{**rules, "link_weight": 0.0})
    below = nothing_reached([1.0, 1.2], 0, **rules)
    assert "the strongest weighs 1.200" in below and "≥ 0.15" in below and "weight of 1.5" in below
    shared = nothing_reached([1.6, 1.6, 1.5], 0, **{**rules, "fan_out": True})
    assert "among 3 edges: 0.092 is below the threshold 0.15" in shared
    assert "archived" in nothing_reached([3.0], 0, **rules)
