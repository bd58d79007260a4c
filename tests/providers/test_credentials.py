"""The credential store on a real SQLite file: encrypted at rest, per principal, never shown."""

from __future__ import annotations

import base64
import logging
import os
import sqlite3
from pathlib import Path

import pytest
from pydantic import SecretStr

from tooldeck.exceptions import ConfigError
from tooldeck.providers.credentials import EncryptedCredentialStore, credential_key

SECRET = "sk-live-4f9a0c7e1b2d3a5f6e7d8c9b"


@pytest.fixture
def store(tmp_path: Path) -> EncryptedCredentialStore:
    key = credential_key(tmp_path / "credentials.key", use_keyring=False)
    made = EncryptedCredentialStore(tmp_path / "credentials.db", key)
    yield made
    made.close()


def test_a_secret_is_stored_encrypted_and_read_back_by_its_owner_only(
    store: EncryptedCredentialStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store.put("ada", "module:weather", SECRET)
    got = store.get("ada", "module:weather")
    assert got is not None and got.get_secret_value() == SECRET
    assert SECRET not in repr(got) and SECRET not in str(got)  # SecretStr: ********
    assert store.get("bob", "module:weather") is None  # never another principal's
    assert [(c.principal, c.scope) for c in store.scopes("ada")] == [("ada", "module:weather")]
    assert store.scopes("bob") == []
    raw = (tmp_path / "credentials.db").read_bytes()
    wal = tmp_path / "credentials.db-wal"
    raw += wal.read_bytes() if wal.exists() else b""
    assert SECRET.encode() not in raw and b"4f9a0c7e" not in raw  # encrypted at rest
    assert SECRET not in caplog.text
    assert (tmp_path / "credentials.db").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "credentials.key").stat().st_mode & 0o777 == 0o600
    store.put("ada", "module:weather", "rotated")
    assert store.get("ada", "module:weather") == SecretStr("rotated")
    assert store.delete("ada", "module:weather") and store.get("ada", "module:weather") is None
    assert not store.delete("ada", "module:weather")


def test_a_row_copied_under_another_principal_does_not_decrypt(
    store: EncryptedCredentialStore, tmp_path: Path
) -> None:
    """The principal and scope are the cipher's associated data."""
    store.put("ada", "github", SECRET)
    store.put("bob", "github", "bobs-token")
    with sqlite3.connect(tmp_path / "credentials.db") as db:  # bob swaps in ada's row
        (sealed,) = db.execute("SELECT sealed FROM credentials WHERE principal='ada'").fetchone()
        db.execute("UPDATE credentials SET sealed = ? WHERE principal = 'bob'", (sealed,))
    with pytest.raises(ConfigError, match="cannot be decrypted") as caught:
        store.get("bob", "github")
    assert SECRET not in str(caught.value)


def test_another_key_cannot_read_and_says_why(tmp_path: Path) -> None:
    first = EncryptedCredentialStore(tmp_path / "c.db", os.urandom(32))
    first.put("ada", "github", SECRET)
    first.close()
    other = EncryptedCredentialStore(tmp_path / "c.db", os.urandom(32))
    with pytest.raises(ConfigError, match="not the one it was stored with"):
        other.get("ada", "github")
    other.close()


def test_the_key_comes_from_the_setting_else_a_private_file(tmp_path: Path) -> None:
    given = base64.urlsafe_b64encode(os.urandom(32)).decode()
    assert credential_key(tmp_path / "k", setting=SecretStr(given)) == base64.urlsafe_b64decode(
        given
    )
    assert not (tmp_path / "k").exists()  # the setting wins; no file made
    made = credential_key(tmp_path / "k", use_keyring=False)
    assert credential_key(tmp_path / "k", use_keyring=False) == made  # the same key again
    with pytest.raises(ConfigError, match="URL-safe base64 of 32 bytes"):
        credential_key(tmp_path / "k", setting=SecretStr("too-short"))
    (tmp_path / "k").chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        credential_key(tmp_path / "k", use_keyring=False)


def test_the_key_is_kept_in_the_os_keyring_when_there_is_one(tmp_path: Path) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        """A keyring that keeps entries in memory (stands in for the OS's)."""

        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.entries: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.entries.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.entries[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.entries.pop((service, username), None)

    before = keyring.get_keyring()
    memory = Memory()
    keyring.set_keyring(memory)
    try:
        key = credential_key(tmp_path / "k")
        assert credential_key(tmp_path / "k") == key
        assert not (tmp_path / "k").exists()  # in the keyring, not in a file
        ((service, _),) = memory.entries
        assert service == "tooldeck"
    finally:
        keyring.set_keyring(before)


def test_a_store_others_may_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "credentials.db"
    path.touch()
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        EncryptedCredentialStore(path, os.urandom(32))
