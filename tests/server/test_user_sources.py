"""Each user's own statements: uploaded over REST, read by ``user_context`` for them only.

Two users behind a proxy that names them (``X-User``) each upload a statement; each
sees only their own transactions, a third sees none, and nobody reaches another's
file or the server's configured sources (which serve ``[context] owners`` only).
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

DATA = Path(__file__).resolve().parents[1] / "packs" / "context_data"
ANN = (DATA / "checking.ofx").read_text()
BOB = ANN.replace("OAKWOOD APARTMENTS", "HARBOR LOFTS").replace("UBER", "LYFT")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = load_settings(
        data_dir=tmp_path / "data",
        builtin={"enabled": False},
        server={"trust_user_header": True},  # X-User names the caller (behind a proxy)
        context={"tasks": {"todo_txt": str(DATA / "todo.txt")}},  # the owner's, configured
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as c:
        yield c


def payees(client: TestClient, user: str) -> Any:
    answer = client.post(
        "/api/tools/execute/user_context",
        json={"action": "query", "category": "finance", "per_page": 50},
        headers={"X-User": user},
    )
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    if data["query"] is None:
        return data["categories"][0]["status"]
    return sorted({t["payee"] for t in data["query"]["transactions"]})


def test_two_users_each_see_only_their_own_transactions(client: TestClient, tmp_path: Path) -> None:
    for user, text in (("ann", ANN), ("bob", BOB)):
        stored = client.put(
            "/api/context/uploads/finance/checking.ofx",
            json={"content": text},
            headers={"X-User": user},
        )
        assert stored.status_code == 200, stored.text
        assert stored.json()["name"] == "checking.ofx"
    assert "OAKWOOD APARTMENTS" in payees(client, "ann")
    assert not any("LYFT" in p or "HARBOR" in p for p in payees(client, "ann"))
    assert "HARBOR LOFTS" in payees(client, "bob")
    assert not any("UBER" in p or "OAKWOOD" in p for p in payees(client, "bob"))
    assert payees(client, "carol") == "not_configured"

    listed = client.get("/api/context/uploads", headers={"X-User": "bob"}).json()
    assert [(u["category"], u["name"]) for u in listed] == [("finance", "checking.ofx")]
    sources = client.get("/api/context/sources", headers={"X-User": "bob"}).json()
    assert [s["category"] for s in sources] == ["finance"]  # not the owner's tasks
    owner = client.get("/api/context/sources").json()  # no X-User: anonymous, the owner
    assert [s["category"] for s in owner] == ["tasks"]

    files = [p for p in (tmp_path / "data" / "sources").rglob("*") if p.is_file()]
    assert len(files) == 2 and not any("ann" in str(p) or "bob" in str(p) for p in files)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    folders = [p for p in (tmp_path / "data" / "sources").rglob("*") if p.is_dir()]
    assert folders and all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in folders)

    bigger = "OFXHEADER:100\n" + "<!-- padding -->\n" * 80_000  # 1.4 MB: over the 1 MiB default
    stored = client.put(
        "/api/context/uploads/finance/big.ofx", json={"content": bigger}, headers={"X-User": "ann"}
    )
    assert stored.status_code == 200, stored.text[:300]  # uploads have their own body limit
    client.delete("/api/context/uploads/finance/big.ofx", headers={"X-User": "ann"})

    gone = client.delete("/api/context/uploads/finance/checking.ofx", headers={"X-User": "carol"})
    assert gone.status_code == 404  # carol has none; bob's is not hers to delete
    assert "HARBOR LOFTS" in payees(client, "bob")
    assert client.delete(
        "/api/context/uploads/finance/checking.ofx", headers={"X-User": "bob"}
    ).json() == {"deleted": True}
    assert payees(client, "bob") == "not_configured"


@pytest.mark.parametrize(
    ("category", "name", "status", "says"),
    [
        ("finance", ".hidden.ofx", 422, "pattern"),
        ("finance", "a%0Ab.ofx", 422, "pattern"),
        ("secrets", "key.ofx", 422, "finance"),
    ],
)
def test_an_upload_is_a_plain_file_of_its_kind(
    client: TestClient, category: str, name: str, status: int, says: str
) -> None:
    refused = client.put(
        f"/api/context/uploads/{category}/{name}", json={"content": "x"}, headers={"X-User": "ann"}
    )
    assert refused.status_code == status and says in refused.text, refused.text

    traversal = client.put(
        "/api/context/uploads/finance/..%2F..%2Fetc%2Fpasswd.ofx",
        json={"content": "x"},
        headers={"X-User": "ann"},
    )
    assert traversal.status_code in (404, 422)


def test_a_user_keeps_at_most_max_files_of_at_most_max_bytes(tmp_path: Path) -> None:
    from tooldeck.exceptions import InvalidArgumentsError
    from tooldeck.packs.context.user_sources import UserSources

    uploads = UserSources(tmp_path, max_bytes=10, max_files=2)
    with pytest.raises(InvalidArgumentsError, match="11 bytes; a source file holds at most 10"):
        uploads.add("ann", "tasks", "todo.txt", b"x" * 11)
    uploads.add("ann", "tasks", "a.txt", b"x")
    uploads.add("ann", "tasks", "b.txt", b"x")
    uploads.add("ann", "tasks", "b.txt", b"y")  # a replacement is not one more
    with pytest.raises(InvalidArgumentsError, match="you have 2 source files"):
        uploads.add("ann", "finance", "c.ofx", b"x")
    assert [f.name for f in uploads.files("bob")] == []


@pytest.mark.anyio
async def test_a_cached_result_answers_only_the_adapter_it_came_from() -> None:
    """Results are keyed by ``id(adapter)``: an id reused by another user's adapter (the
    first one gone) must not hand it the first one's records."""
    from tooldeck.packs.context.adapter import ContextAdapter
    from tooldeck.packs.context.bridge import ContextBridge

    class Notes(ContextAdapter):
        category, platform = "tasks", "notes"

        def __init__(self, owner: str) -> None:
            self.owner = owner

        async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
            return [{"owner": self.owner}], 1, {}

        def normalize_for_tools(self, records: Any, *, include_alerts: bool = True) -> Any:
            return {"records": records}

    ann, bob = Notes("ann"), Notes("bob")
    shared = ContextBridge([ann], ttl_s=3600)
    assert (await shared.fetch(["tasks"]))["tasks"][0].data == [{"owner": "ann"}]
    entry = shared._cache.pop(id(ann))
    shared._cache[id(bob)] = entry  # as if bob's adapter had been given ann's old id
    fetched = await shared.with_adapters([bob]).fetch(["tasks"])
    assert [r.data for r in fetched["tasks"]] == [[{"owner": "ann"}], [{"owner": "bob"}]]
