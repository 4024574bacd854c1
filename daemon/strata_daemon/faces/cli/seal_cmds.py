"""`strata encrypt`, `strata rekey`, `strata decrypt`: a home's database sealed at rest
(docs/sealing.md). `strata init --encrypt` seals a new home the same way."""

from __future__ import annotations

from strata_daemon.app import sealing
from strata_daemon.base.wording import counted
from strata_daemon.config.home import resolve_home
from strata_daemon.faces.cli.output import emit

COMMANDS = ("encrypt", "rekey", "decrypt")
KEY_FILE_HELP = ("the key's file, outside the home: read when it exists (64 hex digits or a passphrase), "
                 "else a new key is written there (0600)")


def shown(r: dict) -> str:
    """What a person reads after a home was sealed, its key changed or unsealed."""
    done = f"{counted(len(r['files']), 'file')} written again in {r['seconds']} s; " if r["files"] else ""
    if not r["sealed"]:
        return f"the home is no longer sealed: {done.removesuffix('; ')}"
    text = f"the home is sealed: {done}its key comes from {r['key_source']}"
    if r.get("key_written"):
        text += (f"\nkeep a copy of {r['key_file']} somewhere safe, away from this machine's backups of the "
                 "home: without it nobody, strata included, can read the memories again")
    if r.get("warning"):
        text += f"\n{r['warning']}"
    return text


def _on_home(args, change) -> int:
    home = resolve_home(args.home)
    home.require()
    emit(change(home), args.json, shown)
    return 0


def cmd_encrypt(args) -> int:
    return _on_home(args, lambda home: sealing.seal(home, args.key_file))


def cmd_rekey(args) -> int:
    return _on_home(args, lambda home: sealing.rekey(home, args.key_file))


def cmd_decrypt(args) -> int:
    return _on_home(args, sealing.unseal)


def register(sub, common) -> None:
    p = sub.add_parser("encrypt", parents=[common], help="Seal the home's database and backups (encrypted at rest).",
                       description="Writes state/memory.db and every backup in state/backups/ again, encrypted "
                                   "whole (SQLCipher: pages, WAL and all). The key is STRATA_KEY's or the systemd "
                                   "credential strata-key's when given, else --key-file's; store.key_file then "
                                   "names it. Stop the daemon first.")
    p.add_argument("--key-file", help=KEY_FILE_HELP + " (default: ~/.config/strata/keys/HOME-HASH.key)")
    p.set_defaults(handler=cmd_encrypt)
    p = sub.add_parser("rekey", parents=[common], help="Seal a sealed home again under a new key.",
                       description="Writes the database and its backups again under a new key and points "
                                   "store.key_file at it; the old key file is left for you to remove.")
    p.add_argument("--key-file", help=KEY_FILE_HELP + " (default: a new file beside the current one)")
    p.set_defaults(handler=cmd_rekey)
    p = sub.add_parser("decrypt", parents=[common], help="Unseal the home: its database and backups in the clear.",
                       description="Writes the database and its backups again without encryption and clears "
                                   "store.key_file. Stop the daemon first.")
    p.set_defaults(handler=cmd_decrypt)
