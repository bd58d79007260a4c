"""``EncryptedCredentialStore``: secrets per (principal, scope), encrypted at rest.

    store = EncryptedCredentialStore(data_dir / "credentials.db", credential_key(...))
    store.put("ada", "module:weather", "sk-...")
    store.get("ada", "module:weather").get_secret_value()

One SQLite file (``<data_dir>/credentials.db``, 0600 in a private folder) holds one row
per (principal, scope): the value encrypted with AES-256-GCM (the ``cryptography``
package), a fresh 96-bit nonce per write, and the principal and scope as associated
data, so a row copied under another principal or scope does not decrypt. The key
(32 bytes) is never in that file; ``credential_key`` finds it: the ``[credentials]
key`` setting (``TOOLDECK_CREDENTIALS__KEY``), else the OS keyring (``keyring``: macOS
Keychain, Windows Credential Locker, the Secret Service) where one works, else a key
file made 0600 beside the store. Whoever can read both the store and the key reads
the secrets: that is the same user as the server's, by design (ARCHITECTURE.md:
"encrypted store in the data dir, key from the OS keyring or a 0600 file").

Nothing here logs a value or puts one in an error; ``get`` returns ``SecretStr``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import secrets
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from tooldeck.core.credentials import CredentialInfo
from tooldeck.core.private import not_private
from tooldeck.exceptions import ConfigError

__all__ = ["EncryptedCredentialStore", "credential_key"]

KEY_BYTES = 32
_NONCE_BYTES = 12
_KEYRING_SERVICE = "tooldeck"


class EncryptedCredentialStore:
    """A ``core.credentials.CredentialStore`` in a SQLite file (see the module docstring).

    Args:
        path: The store's file; made 0600 (its folder 0700) when missing.
        key: 32 bytes (``credential_key``).

    Raises:
        ConfigError: the key is not 32 bytes; the file or its folder is another user's
            or may be changed by others (the fix is in the message).
    """

    def __init__(self, path: Path, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ConfigError(f"the credential key must be {KEY_BYTES} bytes, got {len(key)}")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._cipher = AESGCM(key)
        self.path = path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        for item in (path.parent, path):
            _check_private(item, "the credential store", secret=item == path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS credentials (principal TEXT NOT NULL, "
            "scope TEXT NOT NULL, sealed BLOB NOT NULL, updated_at TEXT NOT NULL, "
            "PRIMARY KEY (principal, scope))"
        )

    def put(self, principal: str, scope: str, secret: str) -> None:
        """Store ``secret`` for (principal, scope), replacing what was there."""
        nonce = secrets.token_bytes(_NONCE_BYTES)
        sealed = nonce + self._cipher.encrypt(nonce, secret.encode(), _bound(principal, scope))
        with self._lock:
            self._db.execute(
                "INSERT INTO credentials (principal, scope, sealed, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (principal, scope) DO UPDATE SET "
                "sealed = excluded.sealed, updated_at = excluded.updated_at",
                (principal, scope, sealed, datetime.now(UTC).isoformat()),
            )

    def get(self, principal: str, scope: str) -> SecretStr | None:
        """The secret of (principal, scope), or None when nothing is stored.

        Raises:
            ConfigError: the row does not decrypt: another key than the one it was
                stored with (``[credentials] key`` changed, another keyring), or the
                file was changed.
        """
        from cryptography.exceptions import InvalidTag

        with self._lock:
            row = self._db.execute(
                "SELECT sealed FROM credentials WHERE principal = ? AND scope = ?",
                (principal, scope),
            ).fetchone()
        if row is None:
            return None
        sealed: bytes = row[0]
        try:
            plain = self._cipher.decrypt(
                sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], _bound(principal, scope)
            )
        except InvalidTag:
            raise ConfigError(
                f"the credential {scope!r} of {principal!r} in {self.path} cannot be "
                "decrypted: the key is not the one it was stored with, or the file was "
                "changed; store it again"
            ) from None
        return SecretStr(plain.decode())

    def delete(self, principal: str, scope: str) -> bool:
        """Forget (principal, scope); whether anything was stored."""
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM credentials WHERE principal = ? AND scope = ?", (principal, scope)
            )
        return cursor.rowcount > 0

    def scopes(self, principal: str) -> list[CredentialInfo]:
        """What ``principal`` has stored, by scope, without the values."""
        with self._lock:
            rows = self._db.execute(
                "SELECT scope, updated_at FROM credentials WHERE principal = ? ORDER BY scope",
                (principal,),
            ).fetchall()
        return [
            CredentialInfo(
                principal=principal, scope=scope, updated_at=datetime.fromisoformat(updated)
            )
            for scope, updated in rows
        ]

    def close(self) -> None:
        """Close the file. Idempotent."""
        with self._lock:
            self._db.close()


def credential_key(
    key_file: Path, *, setting: SecretStr | None = None, use_keyring: bool = True
) -> bytes:
    """The store's 32-byte key: the setting, else the OS keyring, else ``key_file``.

    Args:
        key_file: Where the key is kept when there is no keyring (made 0600, URL-safe
            base64, on first use).
        setting: ``[credentials] key`` (URL-safe base64 of 32 bytes), usually from
            ``TOOLDECK_CREDENTIALS__KEY``.
        use_keyring: Try the OS keyring (one key per ``key_file`` path). A machine
            without one (a headless Linux server) uses the file.

    Raises:
        ConfigError: the setting or the file does not hold 32 bytes of base64, or the
            file is another user's or readable by others (``chmod 600`` it).
        OSError: the key file cannot be made or read.
    """
    if setting is not None:
        return _decoded(setting.get_secret_value(), "[credentials] key")
    if use_keyring:
        key = _keyring_key(str(key_file.resolve()))
        if key is not None:
            return key
    key_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        _check_private(key_file, "the credential key file", secret=True)
        return _decoded(key_file.read_text().strip(), str(key_file))
    with os.fdopen(fd, "w") as fh:
        key = secrets.token_bytes(KEY_BYTES)
        fh.write(base64.urlsafe_b64encode(key).decode() + "\n")
    return key


def _keyring_key(account: str) -> bytes | None:
    """The key kept in the OS keyring for ``account`` (made there on first use).

    None when no usable keyring exists (the ``fail`` backend, or one that refuses).
    """
    try:
        import keyring
        from keyring.backends import fail
        from keyring.errors import KeyringError
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return None
    try:
        stored = backend.get_password(_KEYRING_SERVICE, account)
        if stored is None:
            stored = base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()
            backend.set_password(_KEYRING_SERVICE, account, stored)
    except KeyringError:
        return None
    return _decoded(stored, f"the OS keyring entry {_KEYRING_SERVICE}/{account}")


def _decoded(text: str, where: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.encode())
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise ConfigError(
            f"{where} must be the URL-safe base64 of {KEY_BYTES} bytes (make one with: "
            'python -c "import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())")'
        )
    return key


def _bound(principal: str, scope: str) -> bytes:
    """The associated data that ties a sealed value to its row."""
    return f"{principal}\0{scope}".encode()


def _check_private(path: Path, what: str, *, secret: bool) -> None:
    """Refuse ``path`` when another user owns it, or may change it (or read it: ``secret``)."""
    why = not_private(path, secret=secret)
    if why is None:
        return
    if why.startswith("belongs"):
        fix = "use a data_dir of your own"
    else:
        fix = f"{'chmod 600' if secret and path.is_file() else 'chmod 700'} {path}"
    raise ConfigError(f"{what} {path} {why}: {fix}")
