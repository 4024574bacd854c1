"""How a value reads to a person, in the CLI and the inspector alike (JSON keeps the values)."""

from __future__ import annotations

import json
from typing import Any


def plain(value: Any) -> str:
    """Yes or no, "—" for nothing, a list or a flat table as words (`environment=prod, goal=ship`,
    the form --context takes)."""
    if value is None or (isinstance(value, (list, tuple, dict)) and not value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(plain, value))
    if isinstance(value, dict):
        if any(isinstance(v, (dict, list)) for v in value.values()):
            return json.dumps(value, ensure_ascii=False)
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
    return str(value)
