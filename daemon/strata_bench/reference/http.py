"""docs/reference/http.md: every operation of the OpenAPI document."""

from __future__ import annotations

import json

from strata_bench.reference.markdown import NOTE, anchor, code, finish, schema_text, table


def _unwrapped(schema: dict) -> dict:
    """What a schema that may also be null stands for (`X or null` is documented as X)."""
    options = [o for o in schema.get("anyOf") or schema.get("oneOf") or () if o.get("type") != "null"]
    return options[0] if len(options) == 1 else schema


def _body_rows(schema: dict, prefix: str = "", *, link: bool = False) -> list[tuple[str, str, str, str]]:
    """A row per field, with the fields of nested objects (`a.b`) and of arrays of objects (`a[].b`)."""
    rows = []
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        rows.append((code(prefix + name), schema_text(prop, link=link), "yes" if name in required else "",
                     prop.get("description", "")))
        inner = _unwrapped(prop)
        kinds = inner.get("type") if isinstance(inner.get("type"), list) else [inner.get("type")]
        if "array" in kinds and inner.get("items", {}).get("properties"):
            rows += _body_rows(inner["items"], f"{prefix}{name}[].", link=link)
        elif "object" in kinds and inner.get("properties"):
            rows += _body_rows(inner, f"{prefix}{name}.", link=link)
    return rows


def _base_of(name: str, schemas: dict) -> str | None:
    """The largest other schema whose every field this one has, alike and as required: its
    table need not be repeated."""
    schema = schemas[name]
    props, required = schema.get("properties", {}), set(schema.get("required", ()))

    def within(other: dict) -> bool:
        theirs = other.get("properties", {})
        return bool(theirs) and all(props.get(k) == v and (k in required) == (k in other.get("required", ()))
                                    for k, v in theirs.items())

    found = [(len(s.get("properties", {})), n) for n, s in schemas.items() if n != name and within(s)]
    return max(found)[1] if found else None


def _status_names(ops: list) -> dict[str, str]:
    """Each named error response of the document with the status it stands for."""
    return {r["$ref"].rsplit("/", 1)[-1]: code for _, _, op in ops for code, r in op["responses"].items()
            if "$ref" in r}


def _intro(doc: dict, components: dict) -> list[str]:
    """The title, where the document comes from, the server, and how requests are authenticated."""
    lines = ["# HTTP API reference", "", NOTE, "",
             f"From the OpenAPI {doc['openapi']} document that `strata serve --openapi` prints and "
             "`GET /openapi.json` serves.", "",
             doc["info"].get("description", ""), ""]
    servers = [s["url"] for s in doc.get("servers", ())]
    if servers:
        lines += ["Server URL: " + ", ".join(code(u) for u in servers)
                  + " (over the Unix socket the host name is not used).", ""]
    lines += ["Read operations take `scope`, to read a namespace strata.toml shares (`agent.shared`); writing "
              "operations do not. The socket, the port and the limits are settings: see "
              "[`[http]` in the configuration reference](config.md#http).", ""]
    schemes = components.get("securitySchemes", {})
    if schemes:
        lines += ["## Authentication", ""]
        for name, scheme in schemes.items():
            kind = f"HTTP {scheme['scheme']}" if scheme.get("type") == "http" else scheme.get("type", "")
            lines += [f"`{name}` ({kind}): {scheme.get('description', '')}", ""]
    return lines


def _errors(ops: list, components: dict) -> list[str]:
    """The named error responses, by status."""
    statuses = _status_names(ops)
    named = components.get("responses", {})
    if not named:
        return []
    lines = ["## Errors", "", "Every error has the body " + schema_text({"$ref": "#/components/schemas/Error"},
                                                                        link=True) + ".", ""]
    lines += table(("Status", "When"), [(code(statuses.get(name, "")), r.get("description", ""))
                                         for name, r in sorted(named.items(),
                                                               key=lambda item: statuses.get(item[0], ""))])
    lines.append("")
    return lines


def _parameters(params: list) -> list[str]:
    if not params:
        return []
    rows = []
    for p in params:
        schema = p.get("schema", {})
        extra = f" (default {json.dumps(schema['default'])})" if "default" in schema else ""
        rows.append((code(p["name"]), p["in"], schema_text({k: v for k, v in schema.items() if k != "default"}),
                     "yes" if p.get("required") else "", p.get("description", "") + extra))
    return ["Parameters:", ""] + table(("Name", "In", "Type", "Required", "Description"), rows) + [""]


def _responses(responses: dict) -> list[str]:
    """A line per answer with a body of its own; the named errors together, on one line."""
    lines = ["Responses:", ""]
    errors = [status for status, r in responses.items() if "$ref" in r]
    for status, r in responses.items():
        if "$ref" not in r:
            schema = r.get("content", {}).get("application/json", {}).get("schema", {})
            lines.append(f"- `{status}`: {schema_text(schema, link=True)}: {r.get('description', '')}")
    if errors:
        lines.append("- " + ", ".join(code(c) for c in errors) + ": an "
                     + schema_text({"$ref": "#/components/schemas/Error"}, link=True)
                     + " (see [Errors](#errors))")
    lines.append("")
    return lines


def _operation(path: str, method: str, op: dict) -> list[str]:
    lines = [f"### {op['operationId']}", "", f"`{method} {path}`", "", op.get("summary", ""), "",
             op.get("description", ""), ""]
    lines += _parameters(op.get("parameters", []))
    body = op.get("requestBody")
    if body:
        schema = body["content"]["application/json"]["schema"]
        lines += ["Request body (JSON" + (", required" if body.get("required") else "") + "):", ""]
        rows = _body_rows(schema)
        lines += (table(("Field", "Type", "Required", "Description"), rows) if rows
                  else [schema_text(schema)]) + [""]
    return lines + _responses(op["responses"])


def _schemas(schemas: dict) -> list[str]:
    """Each schema's fields; one that has every field of a larger one lists only its own."""
    if not schemas:
        return []
    lines = ["## Schemas", "", "The bodies the operations answer with, and the shapes they share. A field "
             "not marked required is there only when it applies.", ""]
    for name, schema in schemas.items():
        lines += [f"### {name}", "", schema.get("description", ""), ""]
        base = _base_of(name, schemas)
        shown = schema
        if base is not None:
            lines += [f"The fields of {schema_text({'$ref': base}, link=True)}, and:", ""]
            mine = {k: v for k, v in schema["properties"].items() if k not in schemas[base]["properties"]}
            shown = {**schema, "properties": mine}
        rows = _body_rows(shown, link=True)
        lines += (table(("Field", "Type", "Required", "Description"), rows) if rows
                  else [schema_text(schema, link=True)]) + [""]
    return lines


def http_markdown() -> str:
    from strata_daemon.faces.http.openapi import document

    doc = document()
    components = doc.get("components", {})
    lines = _intro(doc, components)
    ops = [(path, method.upper(), op) for path, item in doc["paths"].items() for method, op in item.items()]
    tags: dict[str, list] = {}
    for path, method, op in ops:
        tags.setdefault(op["tags"][0] if op.get("tags") else "other", []).append((path, method, op))
    lines += ["## Operations", ""]
    lines += table(("Method", "Path", "Summary"),
                    [(method, f"[{code(path)}](#{anchor(op['operationId'])})", op.get("summary", ""))
                     for path, method, op in ops])
    lines.append("")
    lines += _errors(ops, components)
    descriptions = {t["name"]: t.get("description", "") for t in doc.get("tags", ())}
    for tag, items in tags.items():
        lines += [f"## {tag}", "", descriptions.get(tag, ""), ""]
        for path, method, op in items:
            lines += _operation(path, method, op)
    lines += _schemas(components.get("schemas", {}))
    return finish(lines)
