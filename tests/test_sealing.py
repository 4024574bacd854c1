"""A sealed home (docs/sealing.md): its database, WAL, backups and exports encrypted, the key
kept outside the home, and every way in refusing to open it without the key."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from sealed_pages import clear_pages
from strata_daemon.store import cipher

pytestmark = pytest.mark.sqlite_only

CANARY = "The boathouse alarm code is Quillfeather-8841."
WORD = b"Quillfeather"


def state_bytes(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in (home / "state").rglob("*") if p.is_file()}


def key_of(home: Path) -> str:
    line = next(x for x in (home / "strata.toml").read_text().splitlines() if x.startswith("store.key_file"))
    return Path(line.split('"')[1]).read_text().strip()


def examined(cli, **kw) -> dict:
    return json.loads(cli("doctor", "--json", **kw).out)


@pytest.fixture
def sealed(cli, home, tmp_path):
    """The test's home sealed by `strata encrypt`, with a memory, a fact and a backup in it."""
    cli("observe", CANARY, check=True)
    cli("fact", "set", "boathouse code", "Quillfeather-8841", check=True)
    cli("backup", check=True)
    r = cli.json("encrypt", "--key-file", str(tmp_path / "keys" / "home.key"))
    assert r["sealed"] and r["key_written"] and len(r["files"]) == 2
    return tmp_path / "keys" / "home.key"


def test_a_sealed_home_keeps_no_word_in_the_clear_and_still_answers(cli, home, sealed):
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o600 and stat.S_IMODE(sealed.parent.stat().st_mode) == 0o700
    assert home not in sealed.parents
    assert cli.json("recall", "boathouse alarm")["hits"][0]["content"] == CANARY
    assert cli.json("fact", "get", "boathouse code")["value"] == "Quillfeather-8841"
    cli("observe", "The boathouse Quillfeather dinghy is blue.", check=True)  # a write on the sealed file
    cli("backup", check=True)
    files = state_bytes(home)
    assert not [name for name, data in files.items() if WORD in data]
    dbs = [home / name for name in files if name.endswith(".db") or name.endswith("-wal")]
    assert len([p for p in dbs if p.name.endswith(".db")]) == 3 and all(cipher.is_sealed(p) for p in dbs
                                                                      if p.name.endswith(".db"))
    # the pages hold the words once decrypted: the search above looked at the right bytes
    assert WORD in clear_pages(home / "state" / "memory.db", sealed.read_text().strip())


def test_a_wrong_or_missing_key_is_an_error_and_changes_nothing(cli, home, sealed, tmp_path):
    before = state_bytes(home)
    os.rename(sealed, tmp_path / "elsewhere.key")
    r = cli("recall", "boathouse")
    assert r.returncode == 7 and "does not exist" in r.err and "without it" in r.err
    (tmp_path / "wrong.key").write_text("ab" * 32)
    os.chmod(tmp_path / "wrong.key", 0o600)
    r = cli("recall", "boathouse", env={"STRATA_KEY": "ab" * 32})
    assert r.returncode == 6 and "does not open" in r.err
    r = cli("status", env={"STRATA_KEY": "a passphrase that is not it"})
    assert r.returncode == 6 and "does not open" in r.err
    assert state_bytes(home) == before  # never a new empty database over the sealed one
    os.rename(tmp_path / "elsewhere.key", sealed)
    assert cli.json("recall", "boathouse")["hits"]


def test_the_key_comes_from_the_environment_or_a_systemd_credential_first(cli, home, sealed, tmp_path):
    secret = sealed.read_text().strip()
    os.rename(sealed, tmp_path / "moved.key")  # store.key_file now names nothing
    assert cli.json("recall", "boathouse", env={"STRATA_KEY": secret})["hits"]
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "strata-key").write_text(secret + "\n")
    assert cli.json("recall", "boathouse", env={"CREDENTIALS_DIRECTORY": str(creds)})["hits"]
    doctor = {f["check"]: f for f in examined(cli, env={"CREDENTIALS_DIRECTORY": str(creds)})["findings"]}
    assert doctor["sealing"]["status"] == "ok" and "credential strata-key" in doctor["sealing"]["message"]


def test_a_key_file_inside_the_home_or_open_to_others_is_refused(cli, home, tmp_path):
    r = cli("encrypt", "--key-file", str(home / "inside.key"))
    assert r.returncode == 7 and "inside the home" in r.err and not (home / "inside.key").exists()
    loose = tmp_path / "loose.key"
    loose.write_text("cd" * 32)
    os.chmod(loose, 0o644)
    r = cli("encrypt", "--key-file", str(loose))
    assert r.returncode == 4 and "chmod 600" in r.err
    assert not cipher.is_sealed(home / "state" / "memory.db")


def test_rekey_and_decrypt_write_every_file_again(cli, home, sealed, tmp_path):
    old = sealed.read_text().strip()
    r = cli.json("rekey", "--key-file", str(tmp_path / "new.key"))
    assert r["key_written"] and len(r["files"]) == 2 and r["old_key_source"].endswith("home.key")
    assert cli("recall", "boathouse", env={"STRATA_KEY": old}).returncode == 6  # the old key opens nothing
    backup = next((home / "state" / "backups").glob("*.db"))
    assert cli("status", env={"STRATA_HOME": str(tmp_path / "none")}).returncode != 0
    assert cli.json("recall", "boathouse")["hits"][0]["content"] == CANARY
    assert cli("encrypt").returncode == 4  # sealed already
    r = cli.json("decrypt")
    assert not r["sealed"] and len(r["files"]) == 2
    assert WORD in (home / "state" / "memory.db").read_bytes() and WORD in backup.read_bytes()
    assert "store.key_file" not in [line.split(" =")[0] for line in (home / "strata.toml").read_text().splitlines()]
    assert cli.json("recall", "boathouse")["hits"][0]["content"] == CANARY


def test_init_encrypt_makes_a_sealed_home_from_the_first_write(cli, tmp_path):
    target = tmp_path / "new-home"
    r = cli.json("init", str(target), "--encrypt", "--key-file", str(tmp_path / "k" / "new.key"))
    assert r["sealing"]["sealed"] and r["sealing"]["key_file"] == str(tmp_path / "k" / "new.key")
    cli("observe", CANARY, env={"STRATA_HOME": str(target)}, check=True)
    assert cipher.is_sealed(target / "state" / "memory.db")
    assert not [n for n, data in state_bytes(target).items() if WORD in data]
    r = cli("init", str(tmp_path / "pg"), "--encrypt", "--store-url", "postgresql://u@localhost/db")
    assert r.returncode == 4 and "PostgreSQL" in r.err


def test_a_sealed_home_exports_sealed_unless_asked_plain(cli, home, sealed, tmp_path):
    out = tmp_path / "export.jsonl"
    cli("export", "-o", str(out), check=True)
    assert out.read_bytes().startswith(b"strata sealed export 1\n") and WORD not in out.read_bytes()
    plain = tmp_path / "plain.jsonl"
    cli("export", "-o", str(plain), "--plain", check=True)
    assert WORD in plain.read_bytes()
    other = tmp_path / "other"
    cli("init", str(other), check=True)
    r = cli("import", str(out), env={"STRATA_HOME": str(other)})
    assert r.returncode == 4 and "no key" in r.err
    assert cli.json("import", str(out), "--key-file", str(sealed), env={"STRATA_HOME": str(other)})["created"] == 1
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(out.read_bytes()[:-20])
    r = cli("import", str(cut), "--key-file", str(sealed), env={"STRATA_HOME": str(tmp_path / "other")})
    assert r.returncode == 4 and "cut short" in r.err
    changed = bytearray(out.read_bytes())
    changed[-5] ^= 1
    cut.write_bytes(bytes(changed))
    r = cli("import", str(cut), "--key-file", str(sealed), env={"STRATA_HOME": str(other)})
    assert r.returncode == 4 and "changed" in r.err
    assert cli.json("import", str(out))["duplicate"] == 1  # its own export, read with its own key


def test_restore_and_purge_on_a_sealed_home(cli, home, sealed):
    backup = next((home / "state" / "backups").glob("memory-*.db"))
    mid = cli.json("observe", "The harbour gate code is Marrowlane-3.")["id"]
    cli("forget", str(mid), "--purge", check=True)
    secret = sealed.read_text().strip()
    for name in ("memory.db", "memory.db-wal"):
        path = home / "state" / name
        assert not path.exists() or b"Marrowlane" not in clear_pages(path, secret)
    r = cli.json("backup", "--restore", str(backup))
    assert cipher.is_sealed(home / "state" / "memory.db") and cipher.is_sealed(Path(r["previous_kept_as"]))
    assert cli.json("recall", "boathouse")["hits"][0]["content"] == CANARY


def test_doctor_and_the_unit_say_how_the_home_is_sealed(cli, home, sealed):
    found = {f["check"]: f for f in examined(cli)["findings"]}
    assert found["sealing"]["status"] == "ok" and str(sealed) in found["sealing"]["message"]
    unit = cli("systemd", "print-unit", "--user", check=True).out
    assert f"LoadCredential=strata-key:{sealed}" in unit
    sealed.rename(sealed.with_suffix(".gone"))
    report = examined(cli)
    found = {f["check"]: f for f in report["findings"]}
    assert not report["ok"] and found["sealing"]["status"] == "error" and found["database"]["status"] == "error"


def test_the_inspector_reads_a_sealed_home(cli, home, sealed):
    from tui_helpers import drive, rows

    async def body(app, pilot):
        layers = dict((r[0], r[1]) for r in rows(app, "#layers"))
        assert layers["memories"].startswith("1 (1 hot") and layers["current facts"] != "0"
    drive(home, body)
