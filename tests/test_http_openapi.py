"""The OpenAPI document: valid, kept in the repository, every answer typed, the bearer scheme as the
server enforces it, and the real server's answers as the document describes them."""

from __future__ import annotations

import json

import pytest
from openapi_spec_validator import validate

from conftest import REPO
from http_helpers import answer_check, check_answer, free_port, served_here
from strata_daemon.faces.http.openapi import document
from strata_daemon.faces.http.routes import OPS

DOC = document()


def test_the_document_is_valid_and_kept_in_the_repository():
    validate(DOC)
    assert json.loads((REPO / "daemon" / "strata_daemon" / "faces" / "http" / "openapi.json").read_text()) == DOC, \
        "run `strata serve --openapi > daemon/strata_daemon/faces/http/openapi.json`"


def _refs(node) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def test_every_answer_is_typed_and_every_shape_is_used():
    for op in OPS:
        answer = DOC["paths"][op.path][op.method.lower()]["responses"][str(op.status)]
        schema = answer["content"]["application/json"]["schema"]
        assert answer["description"] and ("$ref" in schema or "oneOf" in schema or "items" in schema), op.op_id
    components = DOC["components"]
    used = _refs(DOC["paths"]) | _refs(components)
    named = {f"#/components/{kind}/{name}" for kind in ("schemas", "responses") for name in components[kind]}
    assert used <= named, f"references to nothing: {used - named}"
    assert named <= used, f"shapes no answer uses: {named - used}"


def test_the_bearer_token_is_declared_as_the_server_checks_it():
    assert DOC["components"]["securitySchemes"]["bearer"] | {"description": ""} == \
        {"type": "http", "scheme": "bearer", "description": ""}
    assert DOC["security"] == [{"bearer": []}]  # every operation, and the document itself
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            assert "401" in op["responses"], (method, path)


def test_a_body_unlike_the_document_fails_the_check():
    """The check itself can fail: a field added, one left out, or one of another type."""
    memory = {"id": 1, "status": "created", "occurrences": 1, "facts": []}
    check_answer(DOC, "POST", "/v1/memories", 201, memory)
    for broken in ({**memory, "surprise": 1}, {k: v for k, v in memory.items() if k != "occurrences"},
                   {**memory, "status": "stored"}, {**memory, "facts": None}):
        with pytest.raises(AssertionError, match="breaks the OpenAPI document"):
            check_answer(DOC, "POST", "/v1/memories", 201, broken)
    with pytest.raises(AssertionError, match="does not list"):
        answer_check(DOC, "GET", "/v1/status", 404)


def test_the_real_servers_answers_are_as_documented(home):
    """A few calls of each kind to the server `strata serve` runs, over its socket and over TCP:
    each answer, errors too, must be what the document says it is."""
    port = free_port()
    seen: list[tuple[str, str, int]] = []
    with served_here(home, port=port) as raw:
        def api(method, path, body=None, **kw):
            code, answer = raw(method, path, body, **kw)
            check_answer(DOC, method, path, code, answer)
            seen.append((method, path, code))
            return code, answer

        stored = api("POST", "/v1/memories", {"content": "My favourite colour is blue", "kind": "fact",
                                              "context": {"room": "lab"}})[1]
        assert stored["facts"] and stored["facts"][0]["status"] == "created"
        batch = api("POST", "/v1/memories/batch", {"items": [{"content": "Bridge DOWN on gw-02", "kind": "event"},
                                                             {"content": "Bridge DOWN on gw-02", "kind": "event"},
                                                             {"content": "Yesterday the backup of db-01 failed"}]})[1]
        assert batch["duplicate"] == 1
        assert "times" in api("GET", f"/v1/memories/{batch['ids'][2]}")[1]  # "yesterday", resolved
        assert api("POST", "/v1/memories/get", {"ids": [stored["id"], 999]})[1]["missing"] == [999]
        found = api("POST", "/v1/recall", {"query": "bridge gw-02", "mode": "fast", "explain": True})[1]
        assert found["hits"] and "stages" in found
        assert "explain" not in api("POST", "/v1/recall", {"query": "favourite colour", "mode": "fast"})[1]["hits"][0]
        api("POST", f"/v1/recalls/{found['recall_id']}/feedback", {"outcome": "success"})
        assert api("POST", f"/v1/recalls/{found['recall_id']}/feedback", {"outcome": "success"})[0] == 409
        api("PUT", "/v1/facts/bridge", {"value": "DOWN"})
        api("POST", "/v1/facts/bridge/cas", {"expected": "DOWN", "new": "UP"})
        assert api("POST", "/v1/facts/bridge/cas", {"expected": "DOWN", "new": "UP"})[1]["current"] == "UP"
        api("GET", "/v1/facts/bridge")
        api("GET", "/v1/facts?limit=1")
        api("GET", "/v1/facts/conflicts")
        api("DELETE", "/v1/facts/bridge")
        assert api("GET", "/v1/facts/bridge/history")[1]["value"] is None
        api("GET", "/v1/timeline?state=active&state=archived")
        assert api("DELETE", f"/v1/memories/{batch['ids'][0]}?purge=true")[1]["purged"] is True
        api("GET", "/v1/capsule")
        api("GET", "/v1/status")
        api("GET", "/v1/arena")
        for method, path, body in (("GET", "/v1/memories/999", None), ("GET", "/v1/memories/abc", None),
                                   ("POST", "/v1/recall", {"query": ""}), ("GET", "/v1/status?scope=b", None)):
            assert api(method, path, body)[0] in (400, 403, 404)
        assert api("GET", "/v1/status", tcp=True)[0] == 401
        token = (home / "state" / "http-token").read_text().strip()
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": f"Bearer {token}"})[0] == 200
        assert api("GET", "/openapi.json")[1] == DOC
    assert {code for _, _, code in seen} == {200, 201, 400, 401, 403, 404, 409}

