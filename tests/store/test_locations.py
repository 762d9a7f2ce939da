"""Where a store is and where it keeps raw outputs, as the user writes them: DSNs (never shown with
their password), Azure's Entra sign-in decided by host and password, DISKBENCH_ARTIFACTS."""

from __future__ import annotations

from pathlib import Path

import pytest

from diskbench.errors import StoreError, UsageError
from diskbench.providers.azure.store import AzureBlob, uses_entra
from diskbench.store import is_postgresql
from diskbench.store.addons import keeper_for
from diskbench.store.dsn import connect_params, parse, redacted
from diskbench.store.keepers import Folder, InDatabase


def test_which_locations_are_postgresql() -> None:
    assert is_postgresql("postgresql://u@h/db") and is_postgresql("postgres://u@h/db")
    assert not is_postgresql("results/postgresql.sqlite") and not is_postgresql(Path("postgresql://x"))


def test_a_dsn_is_shown_without_its_password() -> None:
    assert redacted(parse("postgresql://alice:s3cret@db.example.net:6543/bench?sslmode=require")) == \
        "postgresql://alice@db.example.net:6543/bench?sslmode=require"
    assert "secret" not in redacted(parse("postgresql:///bench?host=/run/postgresql&password=secret"))
    with pytest.raises(UsageError, match="DSN is not valid"):
        parse("postgresql://u@h/db?no_such_parameter=1")


def test_entra_is_for_azure_servers_without_a_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    azure = parse("postgresql://nightly@srv.postgres.database.azure.com/bench")
    assert uses_entra(azure)
    assert not uses_entra(parse("postgresql://nightly:pw@srv.postgres.database.azure.com/bench"))
    assert not uses_entra(parse("postgresql://nightly@db.example.net/bench"))
    monkeypatch.setenv("PGPASSWORD", "pw")
    assert not uses_entra(azure)
    monkeypatch.delenv("PGPASSWORD")

    class Token:
        token = "eyJ-token"

    class Credential:
        def get_token(self, *scopes: str) -> Token:
            return Token()

    params = connect_params(azure, Credential(), "where")
    assert params["password"] == "eyJ-token" and params["sslmode"] == "require" and params["connect_timeout"] == "10"

    class Broken:
        def get_token(self, *scopes: str) -> Token:
            raise OSError("no credential")

    with pytest.raises(StoreError, match="az login"):
        connect_params(azure, Broken(), "where")


def test_where_raw_outputs_are_kept(tmp_path: Path) -> None:
    assert keeper_for(None, default=None) is None
    assert isinstance(keeper_for(None, default=InDatabase()), InDatabase)
    assert isinstance(keeper_for("database", default=None), InDatabase)
    folder = keeper_for(str(tmp_path / "share"), default=None)
    assert isinstance(folder, Folder) and folder.root == tmp_path / "share"
    blob = keeper_for("https://acct.blob.core.windows.net/c/nightly/", default=None, client=object())
    assert isinstance(blob, AzureBlob) and blob.container_url == "https://acct.blob.core.windows.net/c"
    assert blob.prefix == "nightly"
    with pytest.raises(UsageError, match="names no container"):
        keeper_for("https://acct.blob.core.windows.net/", default=None, client=object())
    with pytest.raises(UsageError, match="not a folder"):
        keeper_for("s3://bucket/x", default=None)
