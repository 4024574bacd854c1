"""A spiderweb node's neighbourhood drawn in text: the node boxed in the middle, its
neighbours on both sides, each joined to it by a line that carries the edge's weight. Pure:
it returns lines, so it is tested without a terminal."""

from __future__ import annotations

import textwrap

from strata_daemon.faces.tui.format import one_line

# A bus cell's character from the directions it joins: left, right, up, down.
_JOINS = {"lr": "─", "l": "─", "r": "─", "ud": "│", "rd": "┌", "ld": "┐", "ru": "└", "lu": "┘",
          "rud": "├", "lud": "┤", "lrd": "┬", "lru": "┴", "lrud": "┼"}
BOX_LINES = 3  # the centre's text is cut after this many lines


def _box(text: str, inner: int) -> list[str]:
    lines = textwrap.wrap(" ".join(text.split()), inner) or [""]
    if len(lines) > BOX_LINES:
        lines = lines[:BOX_LINES - 1] + [one_line(" ".join(lines[BOX_LINES - 1:]), inner)]
    inner = max(len(line) for line in lines)
    return ["╭" + "─" * (inner + 2) + "╮", *(f"│ {line.ljust(inner)} │" for line in lines),
            "╰" + "─" * (inner + 2) + "╯"]


def _rows(count: int, middle: int, height: int) -> list[int]:
    """The rows a side's neighbours take: consecutive, centred on the middle row."""
    start = max(0, min(middle - (count - 1) // 2, height - count))
    return list(range(start, start + count))


def _bus(row: int, rows: list[int], middle: int, outward: str, inward: str) -> str:
    """The bus cell on `row`: joined outward to a neighbour on this row, inward to the box on
    the middle row, and up and down while the bus goes on."""
    if not rows:
        return " "
    top, bottom = min(*rows, middle), max(*rows, middle)
    dirs = {outward} if row in rows else set()
    if row == middle:
        dirs.add(inward)
    if top < row <= bottom:
        dirs.add("u")
    if top <= row < bottom:
        dirs.add("d")
    return _JOINS["".join(d for d in "lrud" if d in dirs)] if dirs else " "


def draw(centre: str, neighbours: list[tuple[str, str]], width: int = 100, most: int = 12) -> list[str]:
    """The picture as lines of at most `width` characters: `centre` boxed, and each neighbour
    (its text, the label on its line: a weight or a link type), the first on the left, the
    second on the right and so on; beyond `most`, a count of those left out."""
    shown = neighbours[:most]
    left, right = shown[0::2], shown[1::2]
    wide = [max((len(w) for _, w in side), default=0) for side in (left, right)]
    fixed = [w + 5 if side else 0 for w, side in zip(wide, (left, right))]  # " ─w─", the bus, the join
    box = _box(centre, max(8, min(len(" ".join(centre.split())), (width - sum(fixed)) // 4)))
    room = max(0, width - len(box[0]) - sum(fixed))
    longest = [max((len(t) for t, _ in side), default=0) for side in (left, right)]
    # Each side gets half the room, and what the other side does not need of its half.
    half = room // 2 if left and right else room
    labels = [max(1, min(longest[i], half + max(0, half - longest[1 - i]))) for i in (0, 1)]
    height = max(len(left), len(right), len(box))
    middle = (height - 1) // 2
    box_top = max(0, min(middle - (len(box) - 1) // 2, height - len(box)))
    at = [_rows(len(side), middle, height) for side in (left, right)]
    lines = []
    for row in range(height):
        inside = box_top <= row < box_top + len(box)
        body = box[row - box_top] if inside else " " * len(box[0])
        if row == middle:  # where the lines meet the box
            body = ("┤" if left else body[0]) + body[1:-1] + ("├" if right else body[-1])
        parts = []
        if left:
            n = at[0].index(row) if row in at[0] else None
            if n is None:
                parts.append(" " * (labels[0] + 1 + wide[0] + 2))
            else:
                text, w = left[n]
                parts.append(one_line(text, labels[0]).rjust(labels[0]) + " " + "─" * (wide[0] - len(w) + 1) + w + "─")
            parts.append(_bus(row, at[0], middle, "l", "r") + ("─" if row == middle else " "))
        parts.append(body)
        if right:
            parts.append(("─" if row == middle else " ") + _bus(row, at[1], middle, "r", "l"))
            n = at[1].index(row) if row in at[1] else None
            if n is not None:
                text, w = right[n]
                parts.append("─" + w + "─" * (wide[1] - len(w) + 1) + " " + one_line(text, labels[1]))
        lines.append("".join(parts).rstrip())
    if len(neighbours) > most:
        lines.append(f"+ {len(neighbours) - most} more not drawn")
    return lines
