"""The markdown every reference document is written in: table cells, code spans, anchors,
JSON schemas in words."""

from __future__ import annotations

import json
import re
from typing import Any

REGENERATE = "python -m strata_bench.reference docs/reference"
NOTE = f"<!-- Generated from the code by `{REGENERATE}`; do not edit by hand. -->"


def cell(text: Any) -> str:
    """Text for one markdown table cell: one line, pipes escaped."""
    return re.sub(r"\s+", " ", str(text)).strip().replace("|", "\\|")


def code(text: Any) -> str:
    """An inline code span that survives any backticks in the text."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return slug.replace(" ", "-")


def finish(lines: list[str]) -> str:
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def schema_text(schema: dict, *, top: bool = True, link: bool = False) -> str:
    """A JSON schema in a few words: type, allowed values, bounds. With `link`, a schema named in
    the OpenAPI document's components is a link to its section."""
    if not schema:
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{anchor(name)})" if link else name
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf")
        text = " or ".join(schema_text(o, top=False, link=link) for o in options)
    elif "enum" in schema:
        text = "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    elif "const" in schema:
        text = json.dumps(schema["const"])
    else:
        kind = schema.get("type", "any")
        kinds = kind if isinstance(kind, list) else [kind]
        words = []
        for k in kinds:
            if k == "array":
                items = schema.get("items")
                words.append("array of " + schema_text(items, top=False, link=link) if items else "array")
            elif k == "object" and isinstance(schema.get("additionalProperties"), dict):
                words.append("object of " + schema_text(schema["additionalProperties"], top=False, link=link)
                             + " values")
            else:
                words.append(k)
        text = " or ".join(words)
    bounds = []
    for key, word in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in schema:
            bounds.append(f"{word} {schema[key]}")
    if schema.get("minLength") == 1:
        bounds.append("not empty")
    elif "minLength" in schema:
        bounds.append(f"at least {schema['minLength']} characters")
    if "maxLength" in schema:
        bounds.append(f"at most {schema['maxLength']} characters")
    if "minItems" in schema:
        bounds.append(f"at least {schema['minItems']} item" + ("" if schema["minItems"] == 1 else "s"))
    if "maxItems" in schema:
        bounds.append(f"at most {schema['maxItems']} items")
    if bounds:
        text += f" ({', '.join(bounds)})"
    return text
