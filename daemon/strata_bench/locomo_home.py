"""A LoCoMo conversation in a temporary strata home: the settings the home is given, and its
turns stored one episode per turn, as `observe_many` takes them from an agent.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench import stores
from strata_bench.locomo_data import Conversation, Turn, token_counter
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home
from strata_daemon.config.load import Config
from strata_daemon.config.settings import BY_KEY


def home_settings(config: Config) -> dict[str, Any]:
    """The settings a home sets itself, so a run measures the recall that home would give;
    the attention filter is off so every turn keeps its own episode."""
    own = {key: value for key, value in config.values.items()
           if config.sources[key] != "default" and key != "store.url"}  # each home its own store (stores.py)
    return {**own, **config.experimental, "store.attention_window_seconds": 0}


def home_toml(settings: Mapping[str, Any]) -> str:
    """Settings, and tuned constants under [experimental] (their names quoted), as dotted keys at
    the top level: valid TOML, and JSON scalars and string lists are TOML values."""
    return "".join(f"{key if key in BY_KEY else f'experimental.{json.dumps(key)}'} = {json.dumps(value)}\n"
                   for key, value in settings.items())


def recall_settings(config: Config) -> dict[str, Any]:
    """The recall.* settings and tuned constants in effect: the run itself chooses the mode and k."""
    own = {k: v for k, v in config.values.items() if k.startswith("recall.") and k not in ("recall.mode", "recall.k")}
    return {**own, **{f"recall.{k}": v for k, v in dataclasses.asdict(config.tuning.recall).items()}}


def store_passes(mode: str) -> int:
    """Passes over the turns before the questions: storing them, embedding them for the cosine
    baseline and, outside fast mode, for the store."""
    return 2 if mode == "fast" else 3


def store_steps(conversations: Sequence[Conversation], mode: str) -> int:
    return sum(len(c.turns) for c in conversations) * store_passes(mode)


def turn_rows(turns: Sequence[Turn], texts: Sequence[str]) -> list[dict]:
    """Observations for observe_many: one message per turn, at its session's date."""
    return [{"content": text, "kind": "message", "event_at": t.at, "source": t.speaker, "session": t.session}
            for t, text in zip(turns, texts, strict=True)]


def episode_turns(ids: Sequence[int], turns: Sequence[Turn]) -> dict[int, list[Turn]]:
    """Episode id -> its turns, from observe_many's ids (one per turn, in order; repeats share one)."""
    out: dict[int, list[Turn]] = {}
    for eid, turn in zip(ids, turns, strict=True):
        out.setdefault(eid, []).append(turn)
    return out


@dataclass(frozen=True)
class Stored:
    """The conversation as the store holds it: identical turns of one session share an episode."""
    episodes: list[int]  # first-seen order
    texts: list[str]  # each episode's text
    speakers: list[str]  # each episode's source
    dia_ids: dict[int, list[str]]
    tokens: dict[int, int] = field(default_factory=dict)  # each episode's text in tokens: its cost in a context


async def store_turns(mem: Memory, conv: Conversation, texts: Sequence[str], mode: str,
                      progress: Callable[[int], None] | None) -> Stored:
    stored = await mem.observe_many(turn_rows(conv.turns, texts), progress=progress)
    by_episode = episode_turns(stored["ids"], conv.turns)
    if progress:  # a shared episode is embedded once: keep the bar's total
        progress((len(texts) - len(by_episode)) * (store_passes(mode) - 1))
    if mode != "fast":
        await mem.embed_pending(progress=progress)
    text_of = {t.dia_id: text for t, text in zip(conv.turns, texts)}
    kept = [text_of[ts[0].dia_id] for ts in by_episode.values()]
    return Stored(list(by_episode), kept, [ts[0].speaker for ts in by_episode.values()],
                  {e: [t.dia_id for t in ts] for e, ts in by_episode.items()},
                  dict(zip(by_episode, token_counter()(kept))))


async def stored_home(root: Path, conv: Conversation, texts: Sequence[str], mode: str,
                      settings: Mapping[str, Any], store_progress: Callable[[int], None] | None):
    """A new home at `root` with this run's settings, holding the conversation (embedded
    unless fast); closed again. Returns (home, stored)."""
    home, _ = init_home(root)
    home.config_path.write_text(stores.toml_line(stores.new_database()) + home_toml(settings), encoding="utf-8")
    async with await Memory.open(home, actor="bench") as mem:
        stored = await store_turns(mem, conv, texts, mode, store_progress)
    return home, stored
