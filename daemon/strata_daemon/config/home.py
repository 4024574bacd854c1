"""Where strata keeps its files. One choice relocates every path: --home, else
STRATA_HOME, else the per-user data folder ($XDG_DATA_HOME/strata, ~/.local/share/strata).
The files strata ships (templates, the pristine capsule and its spec, systemd units) are
package data, found through importlib.resources wherever the package is installed."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from strata_daemon.config.load import Config, load_config, render_default_toml
from strata_daemon.errors import ConfigError

ENV_VAR = "STRATA_HOME"


def shipped(*parts: str) -> Path:
    """A file strata ships beside its code (shipped/ in the package: templates/, capsule/, systemd/)."""
    return Path(str(resources.files("strata_daemon").joinpath("shipped", *parts)))


@dataclass(frozen=True)
class Home:
    root: Path
    named: bool = False  # given by --home, STRATA_HOME or a path: must already be a home

    def exists(self) -> bool:
        return self.config_path.is_file() or self.state_dir.is_dir()

    def require(self) -> None:
        """A home named by the user that is not one is a mistyped path, not a new home; the
        per-user default home is made on first use, whole, as `strata init` makes one."""
        if self.named and not self.exists():
            if self.root.exists() and not self.root.is_dir():  # `--home notes.jsonl`: init would fail too
                raise ConfigError(f"{self.root} is a file, not a strata home",
                                  hint="--home and STRATA_HOME name a home's folder (`strata init DIR` makes one)")
            raise ConfigError(f"there is no strata home at {self.root}",
                              hint=f"`strata init {self.root}` makes one there; or check the path given "
                                   "with --home or STRATA_HOME")
        if not self.named and not self.exists():
            init_home(self.root)

    @property
    def config_path(self) -> Path:
        return self.root / "strata.toml"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def capsule_dir(self) -> Path:
        return self.root / "capsule"

    def capsule_file(self, agent: str, home_namespace: str) -> Path:
        """A namespace's capsule: CAPSULE.md for the home's own namespace (agent.namespace), NAME.md for another."""
        return self.capsule_dir / ("CAPSULE.md" if agent == home_namespace else f"{agent}.md")

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @property
    def db_path(self) -> Path:
        return self.state_dir / "memory.db"

    def config(self) -> Config:
        return load_config(self.config_path)

    def ensure_layout(self) -> None:
        """Create the folders a home needs; state/ is private to the user."""
        try:
            # Only what is missing or open to others: a home on a read-only mount must still open.
            for d in (self.root, self.capsule_dir, self.templates_dir, self.state_dir):
                if not d.is_dir():
                    d.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self.state_dir.stat().st_mode & 0o077:
                os.chmod(self.state_dir, 0o700)
        except PermissionError as e:
            raise ConfigError(f"cannot create the home at {self.root}: {e.strerror}",
                              hint="choose a writable folder with --home or STRATA_HOME") from None
        except (FileExistsError, NotADirectoryError) as e:
            # The OS says "File exists" or "Not a directory"; a person wants to know which file is in the way.
            where = Path(e.filename or self.root)
            blocker = next((p for p in (where, *where.parents) if p.exists() and not p.is_dir()), where)
            raise ConfigError(f"cannot create the home at {self.root}: {blocker} is a file, not a folder",
                              hint="choose another folder with --home or STRATA_HOME, or move the file away") from None
        except OSError as e:
            raise ConfigError(f"cannot create the home at {self.root}: {e.strerror or e}") from None


def resolve_home(explicit: str | os.PathLike | None = None) -> Home:
    if explicit is not None:
        if not str(explicit).strip():  # `--home ""`, an unset shell variable: not the per-user home
            raise ConfigError("an empty path names no home folder", hint="name it: --home PATH")
        return Home(Path(explicit).expanduser().resolve(), named=True)
    env = os.environ.get(ENV_VAR)
    if env:
        return Home(Path(env).expanduser().resolve(), named=True)
    data = os.environ.get("XDG_DATA_HOME")
    if not data:
        user = os.path.expanduser("~")
        if user in ("~", "/", ""):  # no $HOME (a bare service account): nowhere per-user to fall back on
            raise ConfigError("there is no home folder to keep strata's files in",
                              hint="name one with --home PATH or STRATA_HOME (`strata init PATH` makes it)")
        data = os.path.join(user, ".local", "share")
    return Home(Path(data).resolve() / "strata")


def check_store_url(home: Home, store_url: str) -> None:
    """What `init --store-url` refuses before it writes anything: a URL that is not one, or a
    home whose strata.toml exists already (the URL goes into a new one only)."""
    from strata_daemon.config.settings import BY_KEY

    bad = BY_KEY["store.url"].check(store_url)
    if bad:
        raise ConfigError(f"--store-url {bad}", hint="postgresql://USER:PASSWORD@HOST/DATABASE")
    if home.config_path.exists():
        parts = urlsplit(store_url)
        hidden = parts._replace(netloc=f"{parts.username}:PASSWORD@{parts.netloc.rpartition('@')[2]}") \
            if parts.password is not None else parts
        raise ConfigError(f"{home.config_path} exists already; --store-url writes only a new one",
                          hint=f'set store.url = "{urlunsplit(hidden)}" in it, or run `strata init` without '
                               "--store-url to use it as it is")


def init_home(path: str | os.PathLike, *, store_url: str | None = None) -> tuple[Home, bool]:
    """Lay out a home with the pristine example capsule; write a commented strata.toml unless
    one exists, with `store_url` as its store.url when given. Returns (home, wrote_config)."""
    if not str(path).strip():
        raise ConfigError("an empty path names no folder", hint="name the home's folder, e.g. strata init ~/agent-home")
    home = Home(Path(path).expanduser().resolve())
    if store_url is not None:
        check_store_url(home, store_url)
    home.ensure_layout()
    example, capsule = shipped("capsule", "CAPSULE.md"), home.capsule_dir / "CAPSULE.md"
    if example.is_file() and not capsule.exists():
        fd = os.open(capsule, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(example.read_bytes())
    if home.config_path.exists():
        return home, False
    text = render_default_toml()
    if store_url is not None:
        text = text.replace('# store.url = ""', "store.url = " + json.dumps(store_url), 1)
    fd = os.open(home.config_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return home, True
