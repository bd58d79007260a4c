"""An HTTP API's OpenAPI document as tools (issue 32, part 2), against real servers.

- A FastAPI app on 127.0.0.1 (its own ``/openapi.json``): path, query, header and
  body arguments, bearer auth from the table or each caller's stored credential,
  errors mapped to envelopes, a response its document does not allow, and a path
  argument that tries to leave its path.
- Temporal's HTTP API document, as it ships in the ``temporalio`` package (228
  operations, 458 schemas): every operation a tool that every format exports, and
  real calls to ``temporal server start-dev``'s HTTP API.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
import temporalio
from fastapi import FastAPI, File, Form, Header, HTTPException, UploadFile
from fastapi.responses import PlainTextResponse
from processes import free_port, serve_app
from pydantic import BaseModel
from temporal import temporal_server

from deadlines import wait_until
from tooldeck.config import load_settings
from tooldeck.exceptions import ConfigError
from tooldeck.exporters import FORMATS, export
from tooldeck.providers.openapi import OpenAPIConfig, openapi_tools
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

TEMPORAL_DOCUMENT = (
    Path(temporalio.__file__).parent
    / "bridge/sdk-core/crates/protos/protos/api_upstream/openapi/openapiv3.yaml"
)


class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []


def shop() -> tuple[FastAPI, list[str]]:
    app = FastAPI(title="shop")
    hits: list[str] = []
    items = {"1": Item(name="kettle", price=30.0)}

    @app.get("/items/{item_id}", operation_id="getItem", response_model=Item)
    def get_item(item_id: str, verbose: bool = False, x_trace: str | None = Header(None)) -> Item:
        """Read one item."""
        hits.append(f"get {item_id} verbose={verbose} trace={x_trace}")
        if item_id not in items:
            raise HTTPException(404, f"no item {item_id}")
        return items[item_id]

    @app.post("/items", operation_id="createItem", response_model=Item, status_code=201)
    def create_item(item: Item, authorization: str | None = Header(None)) -> Item:
        """Add an item (needs the shop's token)."""
        if authorization != "Bearer s3cret" and authorization != "Bearer ana-token":
            raise HTTPException(401, "bad token")
        items[item.name] = item
        return item

    @app.get("/broken", operation_id="broken", responses={200: {"model": Item}})
    def broken() -> Any:
        """Answers what its document does not allow."""
        return {"name": 5}

    @app.get("/echo", operation_id="echo")
    def echo(authorization: str | None = Header(None)) -> Any:
        """Refuses, echoing the request's token (as some APIs' errors do)."""
        raise HTTPException(400, f"bad request; you sent {authorization}")

    @app.get("/whoami", operation_id="whoami")
    def whoami(authorization: str | None = Header(None)) -> dict[str, Any]:
        """Answers 200, echoing the request's token in the body and in a key."""
        return {"you": authorization, (authorization or "none"): True, "nested": [authorization]}

    @app.get("/huge", operation_id="huge", response_class=PlainTextResponse)
    def huge() -> str:
        """Two megabytes of text."""
        return "x" * 2_000_000

    @app.get("/admin", operation_id="admin")
    def admin() -> dict[str, str]:
        hits.append("admin")
        return {"secret": "admin page"}

    return app, hits


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    """The shop on 127.0.0.1: its URL, its OpenAPI document in a file, its hits."""
    app, hits = shop()
    spec = tmp_path / "shop.json"
    spec.write_text(json.dumps(app.openapi()))
    with serve_app(app, "the shop app") as url:
        yield url, spec, hits


async def test_a_fastapi_apps_operations_are_tools(
    served: tuple[str, Path, list[str]], tmp_path: Path
) -> None:
    url, _, hits = served
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        f'[builtin]\nenabled = false\n[openapi.shop]\nspec = "shop.json"\nbase_url = "{url}"\n'
        'auth = "bearer"\nsecret = "s3cret"\noperations = ["getItem", "createItem", "broken"]\n'
    )
    runtime = build_runtime(load_settings(config))
    try:
        view = runtime.view(None)
        listed = {d.name: d for d in await view.definitions()}
        assert {"getItem", "createItem", "broken"} <= set(listed) and "admin" not in listed
        get = listed["getItem"]
        assert get.annotations.read_only and get.source_id == "tool:shop:v1"
        assert get.input_schema["required"] == ["item_id"]
        assert set(get.input_schema["properties"]) == {"item_id", "verbose", "x-trace"}

        found = await view.execute("getItem", {"item_id": "1", "verbose": True, "x-trace": "t9"})
        assert found.data == {"name": "kettle", "price": 30.0, "tags": []}, found.error
        assert hits[-1] == "get 1 verbose=True trace=t9"
        made = await view.execute("createItem", {"body": {"name": "mug", "price": 8}})
        assert made.data == {"name": "mug", "price": 8.0, "tags": []}, made.error

        missing = await view.execute("getItem", {"item_id": "nope"})
        assert missing.error is not None and "HTTP 404" in missing.error.message
        assert "no item nope" in missing.error.message
        wrong = await view.execute("createItem", {"body": {"name": "x"}})
        assert wrong.error is not None and wrong.error.type == "validation"
        assert "price" in wrong.error.message  # checked before any request
        bad = await view.execute("broken", {})
        assert bad.error is not None and "document does not allow" in bad.error.message
        # a path argument stays in its path: /items/..%2Fadmin, never /admin
        escaped = await view.execute("getItem", {"item_id": "../admin"})
        assert escaped.error is not None and "admin" not in hits
        for fmt in FORMATS:
            export(list(listed.values()), fmt)
        # in one session, an API's answer is untrusted: a write after it asks first
        session = runtime.context(session_id="s1")
        await view.execute("getItem", {"item_id": "1"}, session)
        gated = await view.execute("createItem", {"body": {"name": "cup", "price": 2}}, session)
        assert gated.error is not None and gated.error.type == "confirmation_required"
    finally:
        await runtime.aclose()


async def test_a_hostile_api_cannot_leak_the_token_flood_memory_or_take_a_header(
    served: tuple[str, Path, list[str]],
) -> None:
    url, spec, _ = served
    config = OpenAPIConfig(
        spec=str(spec),
        base_url=url,
        auth="bearer",
        secret="s3cret",  # type: ignore[arg-type]
        max_bytes=100_000,
    )
    tools = {t.name: t for t in openapi_tools("shop", config)}
    echoed = await tools["echo"].execute({})
    assert echoed.error is not None and "Bearer ***" in echoed.error.message
    assert "s3cret" not in echoed.model_dump_json()
    answered = await tools["whoami"].execute({})  # a success that echoes it (issue 53, 6)
    assert answered.data == {"you": "Bearer ***", "Bearer ***": True, "nested": ["Bearer ***"]}
    assert "s3cret" not in answered.model_dump_json()
    flooded = await tools["huge"].execute({})
    assert flooded.error is not None and "more than max_bytes (100000)" in flooded.error.message
    injected = await tools["getItem"].execute({"item_id": "1", "x-trace": "a\r\nX-Evil: 1"})
    assert injected.error is not None and injected.error.type == "validation"
    assert "x-trace: a line break is not allowed" in injected.error.message


def test_a_document_from_a_url_passes_the_address_guard(
    served: tuple[str, Path, list[str]],
) -> None:
    url, _, _ = served
    spec = f"{url}/openapi.json"
    with pytest.raises(
        ConfigError,
        match=r"non-public address; fetching it is refused \(add the host to openapi\.shop\.allow_hosts",
    ):
        openapi_tools("shop", OpenAPIConfig(spec=spec))
    tools = openapi_tools("shop", OpenAPIConfig(spec=spec, base_url=url, allow_hosts=["127.0.0.1"]))
    assert "getItem" in {t.name for t in tools}


def _laughs(levels: int) -> str:
    """YAML's "billion laughs": each anchor's list holds the previous one nine times."""
    lines = ["openapi: 3.0.0", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("laughs.yaml", _laughs(8), "its YAML aliases expand it past 50,000,000 bytes"),
        (
            "deep.json",
            '{"openapi": "3.0.0", "x": ' + "[" * 200_000 + "]" * 200_000 + "}",
            "nested too deeply to read",
        ),
        (
            "deep.yaml",
            "openapi: 3.0.0\nx: " + "[" * 150 + "]" * 150 + "\n",
            "nested more than 100 levels deep",
        ),
        ("swagger.yaml", "swagger: '2.0'\n", "not an OpenAPI 3.0 or 3.1 document"),
        ("dates.yaml", "openapi: 3.0.0\nx: !!binary aGk=\n", "holds a value JSON cannot"),
    ],
)
def test_a_hostile_document_is_a_load_error_read_in_a_killable_process(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "tooldeck.toml").write_text(
        f'[openapi.evil]\nspec = "{name}"\nbase_url = "http://127.0.0.1:9"\n'
        "[builtin]\nenabled = true\n"
    )
    runtime = build_runtime(load_settings(tmp_path / "tooldeck.toml"))
    try:
        assert [e.spec for e in runtime.load_errors] == ["[openapi.evil]"]
        assert message in runtime.load_errors[0].message
        assert runtime.registry.names  # the rest of the runtime serves
    finally:
        asyncio.run(runtime.aclose())


def test_components_whose_refs_double_make_tools_that_export_bounded(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {
        f"L{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/components/schemas/L{i + 1}"},
                "b": {"$ref": f"#/components/schemas/L{i + 1}"},
            },
        }
        for i in range(40)
    }
    schemas["L40"] = {"type": "string"}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/t": {
                "post": {
                    "operationId": "grow",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/L0"}}
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {"schemas": schemas},
    }
    (tmp_path / "doubling.json").write_text(json.dumps(document))
    [tool] = openapi_tools(
        "t", OpenAPIConfig(spec=str(tmp_path / "doubling.json"), base_url="http://127.0.0.1:9")
    )
    for fmt in FORMATS:
        assert len(json.dumps(export([tool.definition], fmt))) < 2_000_000, fmt


async def test_each_caller_uses_their_own_stored_credential(
    served: tuple[str, Path, list[str]],
) -> None:
    url, spec, _ = served
    config = OpenAPIConfig(spec=str(spec), base_url=url, auth="bearer", credential=True)
    runtime = build_runtime(load_settings(builtin={"enabled": False}, openapi={"shop": config}))
    try:
        from tooldeck.core.credentials import CredentialStore

        runtime.services.get(CredentialStore).put("ana", "openapi:shop", "ana-token")  # type: ignore[type-abstract]
        body = {"body": {"name": "pan", "price": 20}}
        ana = await runtime.view(None).execute("createItem", body, runtime.context(user="ana"))
        assert ana.success, ana.error
        bob = await runtime.view(None).execute("createItem", body, runtime.context(user="bob"))
        assert bob.error is not None and bob.error.type == "denied"
        assert "tooldeck credentials set openapi:shop" in bob.error.message
        assert "ana-token" not in bob.error.message
    finally:
        await runtime.aclose()


def test_temporals_real_document_and_its_real_http_api(tmp_path: Path) -> None:
    tools = openapi_tools(
        "temporal",
        OpenAPIConfig(spec=str(TEMPORAL_DOCUMENT), base_url="http://127.0.0.1:1"),
    )
    assert len(tools) == 228
    definitions = [t.definition for t in tools]
    for fmt in FORMATS:
        assert len(export(definitions, fmt)) == 228
    from google.genai import types

    for declaration in export(definitions, "gemini"):
        types.FunctionDeclaration.model_validate(declaration)

    http_port = free_port()
    with temporal_server(http_port=http_port):
        base = f"http://127.0.0.1:{http_port}"
        wait_until(lambda: _answers(f"{base}/api/v1/cluster-info"), "Temporal's HTTP API")
        config = OpenAPIConfig(
            spec=str(TEMPORAL_DOCUMENT),
            base_url=base,
            operations=["GetClusterInfo", "ListNamespaces", "DescribeNamespace"],
        )
        asyncio.run(_call_temporal(config))


async def _call_temporal(config: OpenAPIConfig) -> None:
    runtime = build_runtime(load_settings(builtin={"enabled": False}, openapi={"t": config}))
    try:
        view = runtime.view(None)
        info = await view.execute("GetClusterInfo", {})
        assert info.success, info.error
        assert info.data["serverVersion"]  # type: ignore[index]
        listed = await view.execute("ListNamespaces", {"pageSize": 10})
        assert listed.success, listed.error
        names = [n["namespaceInfo"]["name"] for n in listed.data["namespaces"]]  # type: ignore[index]
        assert "default" in names
        one = await view.execute("DescribeNamespace", {"namespace": "default"})
        assert one.success and one.data["namespaceInfo"]["name"] == "default"  # type: ignore[index]
        nope = await view.execute("DescribeNamespace", {"namespace": "no-such"})
        assert nope.error is not None and "HTTP 404" in nope.error.message
    finally:
        await runtime.aclose()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def forms() -> FastAPI:
    """An app whose bodies are forms, as FastAPI writes them (``Form``, ``File``)."""
    app = FastAPI()

    @app.post("/token", operation_id="login")
    def login(
        username: Annotated[str, Form()],
        password: Annotated[str, Form()],
        scope: Annotated[list[str], Form()],
    ) -> dict[str, Any]:
        return {"user": username, "secret_length": len(password), "scope": scope}

    @app.post("/upload", operation_id="upload")
    async def upload(
        title: Annotated[str, Form()], file: Annotated[UploadFile, File()]
    ) -> dict[str, Any]:
        data = await file.read()
        return {"title": title, "filename": file.filename, "size": len(data)}

    return app


@pytest.fixture
def forms_served(tmp_path: Path) -> Iterator[str]:
    app = forms()
    document = app.openapi()
    document["paths"]["/xml"] = {"post": {
        "operationId": "xml", "requestBody": {"required": True, "content": {
            "application/xml": {"schema": {"type": "string"}}}},
        "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}}}  # fmt: skip
    document["paths"]["/again"] = {"get": {  # a parameter by reference into #/paths
        "operationId": "again", "parameters": [{"$ref": "#/paths/~1xml/post/parameters/0"}],
        "responses": {"200": {"description": "ok"}}}}  # fmt: skip
    document["paths"]["/login"] = {"$ref": "#/paths/~1token"}  # a path item by reference
    (tmp_path / "forms.json").write_text(json.dumps(document))
    with serve_app(app, "the forms app") as url:
        yield url


async def test_form_bodies_are_sent_with_their_fields(forms_served: str, tmp_path: Path) -> None:
    """Issue 55, item 13: a URL-encoded and a multipart body are tools' ``body`` with
    their fields (they were dropped, and the call sent nothing); an operation that
    cannot be a tool is refused alone, the document's others load."""
    (tmp_path / "tooldeck.toml").write_text(
        f'[openapi.forms]\nspec = "forms.json"\nbase_url = "{forms_served}"\n'
    )
    runtime = build_runtime(load_settings(tmp_path / "tooldeck.toml"))
    try:
        view = runtime.view(None)
        listed = {d.name: d for d in await view.definitions()}
        assert set(listed) == {"login", "login_post", "upload"}  # /login is /token's
        schema = listed["login"].input_schema  # the body's fields, through its $defs
        assert list(schema["properties"]) == ["body"] and schema["required"] == ["body"]
        assert {"username", "password", "scope"} <= set(json.dumps(schema).split('"'))
        done = await view.execute(
            "login", {"body": {"username": "ana", "password": "pw123", "scope": ["a", "b"]}}
        )
        assert done.data == {"user": "ana", "secret_length": 5, "scope": ["a", "b"]}, done.error
        sent = await view.execute("upload", {"body": {"title": "notes", "file": "hello"}})
        assert sent.data == {"title": "notes", "filename": "file", "size": 5}, sent.error
        refused = {e.spec: e.message for e in runtime.load_errors}
        assert set(refused) == {
            "[openapi.forms] operation xml", "[openapi.forms] operation again"
        }, refused  # fmt: skip
        assert "#/paths/~1xml" in refused["[openapi.forms] operation again"]
        assert "application/xml" in refused["[openapi.forms] operation xml"]
    finally:
        await runtime.aclose()
