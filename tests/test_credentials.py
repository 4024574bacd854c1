"""Credentials never reach the store: the redactor (base/credentials.py) on its own, then on
every path a text takes in (observe, import, the hooks, MCP, HTTP, facts, a logged query)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_config
from strata_daemon.base.credentials import Redactor

DATA = Path(__file__).parent / "data"
GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
TEXTS = {
    "aws": ("export AWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFGH", "AKIAQWERTYUIOPASDFGH", "aws-access-key"),
    "url": (f"fatal: https://bob:{GITHUB}@github.com/acme/site.git", GITHUB, "github-token"),
    "db url": ("DATABASE_URL=postgres://app:s3cr3t-Pass@db.internal:5432/app", "s3cr3t-Pass", "url-password"),
    "password": ("PGPASSWORD='k8T#q1vW9z' psql -h pg-2", "k8T#q1vW9z", "password"),
    "keyed": ("API_KEY=Zx8kQ2mN4pR7tV9wY1aB3cD5", "Zx8kQ2mN4pR7tV9wY1aB3cD5", "secret"),
    "jwt": ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
    "key block": ("key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU=\n"
                  "-----END OPENSSH PRIVATE KEY-----\nend", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"),
    "redis.conf": ("bind 0.0.0.0\nrequirepass Vq9mT2xLs8Pw\nappendonly yes", "Vq9mT2xLs8Pw", "password"),
    "keytool": ("jarsigner -keystore app.jks -storepass Hq7wE3rT9y app.apk", "Hq7wE3rT9y", "password"),
    "php define": ("define( 'DB_PASSWORD', 'tG5#kw2Lq' );", "tG5#kw2Lq", "password"),
    "rails": ("production:\n  secret_key_base: 8c2f7a19d04b6e35f1a0c9d87b2e4f6a3c5d7e9f1b2a4c6e8d0f2a4b6c8e0a2c", "8c2f7a19d04b6e35", "secret"),
    "sshpass": ("sshpass -p 'Wq3#zLp9' ssh -p 2200 pi@nas", "Wq3#zLp9", "password"),
    "netrc": ("machine files.lan\n  login kim\n  password Tz8~qW3e", "Tz8~qW3e", "password"),
    "pgpass": ("db.lan:5432:*:backup:Rq7.ueZ2%m", "Rq7.ueZ2%m", "password"),
    "aws pair": ('new BasicAWSCredentials("AKIAQWERTYUIOPASDFGH", "wJa9rXUtnFEMI7K7MDENGbPxRfiCYz3kLq2mB8vT")',
                 "wJa9rXUtnFEMI7K7MDENGbPxRfiCYz3kLq2mB8vT", ("aws-access-key", "aws-secret")),
    "wpa": ('network={\n  ssid="Home"\n  psk="amber-fox-2291"\n}', "amber-fox-2291", "password"),
    "stripe test": ("stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dcXyz'", "sk_test_4eC39HqLyjWDarjtT1zdp7dcXyz",
                    "stripe-key"),
    "camel case": ("helm upgrade minio --set auth.rootPassword=Hv4kQ9mZt2", "Hv4kQ9mZt2", "password"),
    "basic header": ('proxy_set_header Authorization "Basic a2ltOnN3b3JkZmlzaDIwMjQ=";', "a2ltOnN3b3JkZmlzaDIwMjQ=",
                     "secret"),
    "stripe, long": ("stripe listen --api-key sk_live_519cMeGuPr0bwFqPqYiJh8bpKkxp3IAcFx1RmhyLbLuMMAgsNt7lRwSBmys5Y",
                     "RwSBmys5Y", "stripe-key"),
    "vault": ("token                  hvs.CAESIJ2kq8Yb3mWz7Lx0Pq5Rt9Uv", "hvs.CAESIJ2kq8Yb3mWz7Lx0Pq5Rt9Uv", "vault-token"),
    "odbc": ("Server=tcp:sql-1,1433;Uid=crm;Pwd={Crm#Odbc-55};Encrypt=yes", "Crm#Odbc-55", "password"),
    "sql login": ("CREATE LOGIN app WITH PASSWORD = N'Wr1ter!Sql', CHECK_POLICY = OFF;", "Wr1ter!Sql", "password"),
    "words, quoted": ('The passphrase for the vault is "purple monkey dishwasher 42".', "monkey dishwasher", "password"),
    # Said in plain words: a key or token that looks generated, a long password of letters, a
    # passphrase of plain words ending its sentence.
    "key, said": ("The API key is Zk93JfPq0aLm27XcVbN4", "Zk93JfPq0aLm27XcVbN4", "secret"),
    "token, said": ("The deploy token is 8f3a9c2e7b1d4f60a5e8c3b2d1f0e9a7", "8f3a9c2e7b1d4f60a5e8c3b2d1f0e9a7", "secret"),
    "letters, said": ("the password for db-1 is correcthorsebattery", "correcthorsebattery", "password"),
    "words, unquoted": ("the passphrase for the backup disk is purple monkey dishwasher", "monkey dishwasher",
                        "password"),
    "words, french": ("Le mot de passe du NAS est « Chat-Noir-1987 » pour l'instant.", "Chat-Noir-1987", "password"),
    "sudo -S": ("echo 'Adm1nSudo!' | sudo -S systemctl restart nginx", "Adm1nSudo!", "password"),
    "header": ('proxy_set_header X-Api-Key "f6fb422a97d6437822b70452c97b1d3e";', "f6fb422a97d6437822b70452c97b1d3e",
               "secret"),
}
LOOKALIKES = ("commit 3f9a1c2d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c, request 123e4567-e89b-12d3-a456-426614174000",
              "image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 v2.14.3-rc.1",
              "password=${DB_PASSWORD} and token: <your token here>; reset your password at the portal",
              "postgres://app:${DB_PASSWORD}@db:5432/app and ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host",
              "mkdir -p /var/lib/strata && ssh -p 2222 admin@host && docker run -p 8080:80 nginx",
              'ok: [db-1] => {"password": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"}',
              "env:\n  DB_PASSWORD: ${{ secrets.DB_PASSWORD }}\n  PASSWORD: $(cat /run/secrets/db)",
              "[user]\n\tsigningkey = 3AA5C34371567BD2\n$ mysql -h db -P3306 -u root -p\nEnter password:\nWelcome",
              "db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\npassword: ENC[AES256_GCM,data:8fq2,iv:Zk9=]",
              'resource "random_password" "grafana" {\n  length = 24\n}\nadmin-password:  12 bytes',
              "kind: SealedSecret\nspec:\n  encryptedData:\n    DB_PASSWORD: AgBy8hCi3xQ9mZr2LkWq7pTn5vY0",
              "CI pass rate: 95% this week; pin count: 40 on the header",
              "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  # replace with a real token",
              "Access denied for user 'root'@'10.0.4.17' (using password: YES)\nSSH_ASKPASS=/usr/lib/ssh/x11-ssh-askpass",
              "password = random_password.db.result\nAPI_TOKEN:  <set to the key 'token' in secret 'api-creds'>",
              "The key is under the mat; the deploy token expires on Friday; the token is in the vault.",
              "The passphrase is stored in the vault. The password is wrong.")


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_each_format_becomes_a_typed_placeholder(name):
    text, secret, kinds = TEXTS[name]
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    out, found = Redactor(key=b"home").redact(text)
    assert secret not in out and f"[redacted:{kinds[-1]}:" in out and [f.kind for f in found] == list(kinds)


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_survive(text):
    assert Redactor(key=b"home").redact(text) == (text, [])


def test_one_secret_keeps_one_hash_and_the_home_keys_it():
    r = Redactor(key=b"home")
    first, second = r.clean(f"token {GITHUB}"), r.clean(f"again: {GITHUB}.")
    assert first.split()[-1] == second.split()[-1].rstrip(".")
    assert Redactor(key=b"another home").clean(f"token {GITHUB}") != first  # a guess cannot be checked
    assert r.clean("my note <private>the combination is 12-34-56</private> end") == "my note [private] end"
    assert Redactor(enabled=False).clean(f"token {GITHUB}") == f"token {GITHUB}"
    own = Redactor(patterns={"employee id": r"EMP-\d{6}"}).clean("badge EMP-204913 at the gate")
    assert own.startswith("badge [redacted:employee-id:") and "204913" not in own


def test_the_development_set_is_found_whole_and_its_lookalikes_kept():
    # Written apart from the rules (tests/data/LABELLING.md); its held-out twin is only scored,
    # by `strata bench redaction`.
    r, missed, wrong = Redactor(key=b"k"), [], []
    for line in (DATA / "secrets_dev.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        out, found = r.redact(item["text"])
        missed += [s["value"] for s in item["secrets"] if s["value"] in out]
        values = [item["text"][f.start:f.end] for f in found]
        wrong += [v for v in values if not any(v in s["value"] or s["value"] in v for s in item["secrets"])]
    assert missed == [] and wrong == []


def _raw(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file() and "models" not in p.parts)


def test_no_face_stores_a_credential(cli, home, tmp_path):
    cli("observe", f"push failed: https://bob:{GITHUB}@github.com/acme/site.git", "--context", f"env=TOKEN={GITHUB}",
        check=True)
    batch = tmp_path / "in.jsonl"
    batch.write_text(json.dumps({"content": "export AWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFGH"}) + "\n", encoding="utf-8")
    cli("import", str(batch), check=True)
    cli("fact", "set", "db password", "hunter22-secret", check=True)
    cli("fact", "set", "bank pin", "4711", check=True)  # a short name says a password too
    cli("fact", "set", "pin count", "40", check=True)  # and only where it does
    cli("hook", "prompt", input=json.dumps({"prompt": f"why did {GITHUB} fail?", "session_id": "s"}), check=True)
    found = cli.json("recall", GITHUB, "--mode", "fast")  # asked by the token: found by its placeholder
    assert found["hits"] and found["query"].startswith("[redacted:github-token:")
    cli("capsule", "render", check=True)
    capsule = home / "capsule" / "CAPSULE.md"  # a person pins a line holding a password
    capsule.write_text(capsule.read_text().replace("<!-- strata:begin recent -->\n",
                                                   "<!-- strata:begin recent -->\n- alarm password: Kx7#pQ2wLm4\n"))
    cli("capsule", "render", check=True)
    raw = _raw(home)
    for secret in (GITHUB, "AKIAQWERTYUIOPASDFGH", "hunter22-secret", "Kx7#pQ2wLm4"):
        assert secret.encode() not in raw, secret
    assert cli.json("fact", "get", "db password")["value"].startswith("[redacted:password:")
    assert cli.json("fact", "get", "bank pin")["value"].startswith("[redacted:password:")
    assert cli.json("fact", "get", "pin count")["value"] == "40"
    assert "- alarm password: [redacted:password:" in capsule.read_text()  # shown to no agent either


def test_redaction_can_be_turned_off_for_a_home(cli, home):
    write_config(home, "[privacy]\nredact = false\n")
    eid = cli.json("observe", f"token {GITHUB}")["id"]
    assert GITHUB in cli.json("show", str(eid))["content"]


def test_bench_redaction_scores_a_set_and_searches_a_home_for_what_it_left(cli):
    r = cli.json("bench", "redaction", "--set", "dev", "--misses")["sets"]
    assert list(r) == ["dev"] and r["dev"]["recall"] >= 0.99 and r["dev"]["false_positive_rate"] <= 0.01
    assert len(r["dev"]["misses"]) == round((1 - r["dev"]["recall"]) * r["dev"]["secrets"]) and r["dev"]["lookalikes"] > 200
    assert r["dev"]["secrets_in_files"] <= len(r["dev"]["misses"])  # what it finds never reaches a file


def test_one_write_may_keep_its_credentials_and_the_history_says_so(cli):
    eid = cli.json("observe", f"the deploy token is {GITHUB}", "--no-redact")["id"]
    shown = cli.json("show", str(eid))
    assert GITHUB in shown["content"]
    kept = [a for a in shown["history"] if a["action"] == "kept_credentials"]
    assert len(kept) == 1 and GITHUB not in json.dumps(kept)
    other = cli.json("observe", f"another token {GITHUB}")["id"]
    assert GITHUB not in cli.json("show", str(other))["content"]


def test_an_export_from_before_redaction_does_not_bring_a_purged_memory_back(cli, home, tmp_path):
    write_config(home, "[privacy]\nredact = false\n")  # a home from before redaction
    eid = cli.json("observe", f"deploy with {GITHUB} from the vault")["id"]
    old = tmp_path / "old.jsonl"
    cli("export", "-o", str(old), check=True)
    cli("forget", str(eid), "--purge", check=True)
    write_config(home, "")  # redaction on, as a home has it after the upgrade
    assert cli.json("import", str(old))["skipped_purged"] == 1
    assert "vault" not in json.dumps(cli.json("recall", "deploy vault", "--mode", "fast")["hits"])


def test_a_long_word_after_a_key_s_name_is_read_in_linear_time():
    """A name searched as `\\w*?key` from every position of a 60 KB word took minutes (every
    observation waited on it); names are bounded now."""
    import time

    started = time.perf_counter()
    for text in ("deploy key " + "a1b2c3d4" * 7500, "--api-key " + "x9" * 30000, "k" * 60000 + " token"):
        Redactor(key=b"home").find(text)
    assert time.perf_counter() - started < 10
