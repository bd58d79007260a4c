"""The chat API's contracts, frozen (seed 003 task 1): a change here must be deliberate.

To change a contract on purpose: update docs/contracts.md, then run
``pytest tests/server/test_chat_contracts.py --inline-snapshot=fix`` and review the diff.
"""

from __future__ import annotations

from typing import Any

from inline_snapshot import snapshot

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app


def chat_contract() -> dict[str, Any]:
    """The chat and runs operations of the OpenAPI document, with every schema they use."""
    runtime = build_runtime(load_settings(builtin={"enabled": False}))
    try:
        document = create_app(runtime).openapi()
    finally:
        runtime.close()
    paths = {
        path: item
        for path, item in document["paths"].items()
        if path.startswith(("/api/chat", "/api/runs"))
    }
    schemas = document["components"]["schemas"]
    wanted: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in wanted:
                    wanted.add(name)
                    walk(schemas[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(paths)
    return {"paths": paths, "schemas": {name: schemas[name] for name in sorted(wanted)}}


def test_the_chat_api_matches_its_frozen_openapi_contract() -> None:
    assert chat_contract() == snapshot(
        {
            "paths": {
                "/api/chat": {
                    "post": {
                        "tags": ["chat"],
                        "summary": "Ask a question; the answer in one response",
                        "description": """\
Run the agent and return the run once it completed, failed, or waits for input.

A run that waits for a confirmation is returned with status 202 and ``pending``;
confirm it with ``POST /api/runs/{id}/confirm``, then read ``GET /api/runs/{id}``.\
""",
                        "operationId": "chat_api_chat_post",
                        "requestBody": {
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/ChatRequest"}
                                }
                            },
                            "required": True,
                        },
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/ChatRun"}
                                    }
                                },
                            },
                            "202": {
                                "description": "The run waits for a confirmation.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/ChatRun"}
                                    }
                                },
                            },
                            "400": {
                                "description": "The body is not valid JSON, or a value cannot be read (the detail says which).",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/chat/stream": {
                    "post": {
                        "tags": ["chat"],
                        "summary": "Ask a question; the run's events as Server-Sent Events",
                        "description": """\
Start a run and stream its events until it ends.

The stream ends after ``run.completed``, ``run.failed`` or ``run.cancelled``. With
``Last-Event-ID: <run_id>:<seq>``, resume that run instead of starting one.\
""",
                        "operationId": "chat_stream_api_chat_stream_post",
                        "parameters": [
                            {
                                "name": "last-event-id",
                                "in": "header",
                                "required": False,
                                "schema": {
                                    "type": "string",
                                    "pattern": "^\\s*(([A-Za-z0-9_-]+:)?\\d+)?\\s*$",
                                    "description": "``<run_id>:<seq>`` of the last event received (resumes after it).",
                                    "default": "",
                                    "title": "Last-Event-Id",
                                },
                                "description": "``<run_id>:<seq>`` of the last event received (resumes after it).",
                            }
                        ],
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/ChatRequest"}
                                }
                            },
                        },
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "text/event-stream": {
                                        "itemSchema": {
                                            "type": "object",
                                            "properties": {
                                                "data": {"type": "string"},
                                                "event": {"type": "string"},
                                                "id": {"type": "string"},
                                                "retry": {"type": "integer", "minimum": 0},
                                            },
                                        }
                                    }
                                },
                            },
                            "400": {
                                "description": "The body is not valid JSON, or a value cannot be read (the detail says which).",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                    "text/event-stream": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                    "text/event-stream": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                },
                            },
                            "409": {
                                "description": "The run's state does not allow this (an illegal transition), or Last-Event-ID names an event of another run.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                    "text/event-stream": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/runs": {
                    "get": {
                        "tags": ["chat"],
                        "summary": "Recent runs",
                        "description": """\
The caller's newest runs first (an approver's: everyone's).

This process's runs, and with the audit database on, all.\
""",
                        "operationId": "list_runs_api_runs_get",
                        "parameters": [
                            {
                                "name": "limit",
                                "in": "query",
                                "required": False,
                                "schema": {
                                    "type": "integer",
                                    "maximum": 500,
                                    "minimum": 1,
                                    "default": 50,
                                    "title": "Limit",
                                },
                            }
                        ],
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "type": "array",
                                            "items": {"$ref": "#/components/schemas/ChatRun"},
                                            "title": "Response List Runs Api Runs Get",
                                        }
                                    }
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/runs/{run_id}": {
                    "get": {
                        "tags": ["chat"],
                        "summary": "A run",
                        "description": "The run's state, answer or pending confirmation.",
                        "operationId": "get_run_api_runs__run_id__get",
                        "parameters": [
                            {
                                "name": "run_id",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string", "title": "Run Id"},
                            }
                        ],
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/ChatRun"}
                                    }
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "409": {
                                "description": "The run's state does not allow this (an illegal transition), or Last-Event-ID names an event of another run.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/runs/{run_id}/events": {
                    "get": {
                        "tags": ["chat"],
                        "summary": "A run's events as Server-Sent Events",
                        "description": "Replay the events after ``Last-Event-ID`` (or ``?after=``), then follow the run live.",
                        "operationId": "run_events_api_runs__run_id__events_get",
                        "parameters": [
                            {
                                "name": "run_id",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string", "title": "Run Id"},
                            },
                            {
                                "name": "after",
                                "in": "query",
                                "required": False,
                                "schema": {
                                    "type": "integer",
                                    "minimum": 0,
                                    "description": "Only events with a larger seq.",
                                    "default": 0,
                                    "title": "After",
                                },
                                "description": "Only events with a larger seq.",
                            },
                            {
                                "name": "last-event-id",
                                "in": "header",
                                "required": False,
                                "schema": {
                                    "type": "string",
                                    "pattern": "^\\s*(([A-Za-z0-9_-]+:)?\\d+)?\\s*$",
                                    "description": "``<run_id>:<seq>`` of the last event received (resumes after it).",
                                    "default": "",
                                    "title": "Last-Event-Id",
                                },
                                "description": "``<run_id>:<seq>`` of the last event received (resumes after it).",
                            },
                        ],
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "text/event-stream": {
                                        "itemSchema": {
                                            "type": "object",
                                            "properties": {
                                                "data": {"type": "string"},
                                                "event": {"type": "string"},
                                                "id": {"type": "string"},
                                                "retry": {"type": "integer", "minimum": 0},
                                            },
                                        }
                                    }
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                    "text/event-stream": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                },
                            },
                            "409": {
                                "description": "The run's state does not allow this (an illegal transition), or Last-Event-ID names an event of another run.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                    "text/event-stream": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    },
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/runs/{run_id}/confirm": {
                    "post": {
                        "tags": ["chat"],
                        "summary": "Approve or deny the call a run waits on",
                        "description": """\
Decide the pending confirmation; the run resumes (409 unless ``waiting_input``).

Only the run's own user, or an approver in ``[approvals] approvers``, decides it.\
""",
                        "operationId": "confirm_run_api_runs__run_id__confirm_post",
                        "parameters": [
                            {
                                "name": "run_id",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string", "title": "Run Id"},
                            }
                        ],
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/ConfirmRequest"}
                                }
                            },
                        },
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/ChatRun"}
                                    }
                                },
                            },
                            "400": {
                                "description": "The body is not valid JSON, or a value cannot be read (the detail says which).",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "409": {
                                "description": "The run's state does not allow this (an illegal transition), or Last-Event-ID names an event of another run.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
                "/api/runs/{run_id}/cancel": {
                    "post": {
                        "tags": ["chat"],
                        "summary": "Cancel a run",
                        "description": "Cancel a run of the caller's that has not finished (409 once it has).",
                        "operationId": "cancel_run_api_runs__run_id__cancel_post",
                        "parameters": [
                            {
                                "name": "run_id",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string", "title": "Run Id"},
                            }
                        ],
                        "responses": {
                            "200": {
                                "description": "Successful Response",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/ChatRun"}
                                    }
                                },
                            },
                            "404": {
                                "description": "No run has this id (among the caller's runs), or the profile is unknown.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "409": {
                                "description": "The run's state does not allow this (an illegal transition), or Last-Event-ID names an event of another run.",
                                "content": {
                                    "application/json": {
                                        "schema": {"$ref": "#/components/schemas/Problem"}
                                    }
                                },
                            },
                            "422": {
                                "description": "Validation Error",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "$ref": "#/components/schemas/HTTPValidationError"
                                        }
                                    }
                                },
                            },
                        },
                    }
                },
            },
            "schemas": {
                "ChatAnswer": {
                    "properties": {
                        "answer_markdown": {"type": "string", "title": "Answer Markdown"},
                        "citations": {
                            "items": {"type": "string"},
                            "type": "array",
                            "title": "Citations",
                        },
                        "confidence": {
                            "type": "number",
                            "maximum": 1.0,
                            "minimum": 0.0,
                            "title": "Confidence",
                        },
                        "needs_clarification": {"type": "boolean", "title": "Needs Clarification"},
                        "clarifying_question": {
                            "anyOf": [
                                {"$ref": "#/components/schemas/ClarifyingQuestion"},
                                {"type": "null"},
                            ]
                        },
                        "tool_calls": {
                            "items": {"$ref": "#/components/schemas/ToolCallRecord"},
                            "type": "array",
                            "title": "Tool Calls",
                        },
                        "grounding": {"$ref": "#/components/schemas/Grounding"},
                        "claims": {
                            "items": {"$ref": "#/components/schemas/Claim"},
                            "type": "array",
                            "title": "Claims",
                        },
                        "intent": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Intent",
                        },
                        "params": {
                            "additionalProperties": True,
                            "type": "object",
                            "title": "Params",
                        },
                        "mode": {"type": "string", "enum": ["router", "model"], "title": "Mode"},
                        "model": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Model",
                        },
                    },
                    "type": "object",
                    "required": [
                        "answer_markdown",
                        "citations",
                        "confidence",
                        "needs_clarification",
                        "grounding",
                        "mode",
                    ],
                    "title": "ChatAnswer",
                    "description": "The answer (seed 004 ``LLMResponse`` plus the calls and the grounding verdict).",
                },
                "ChatRequest": {
                    "properties": {
                        "question": {
                            "type": "string",
                            "maxLength": 4000,
                            "minLength": 1,
                            "title": "Question",
                        },
                        "profile": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Profile",
                        },
                        "account": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Account",
                        },
                        "params": {
                            "additionalProperties": True,
                            "type": "object",
                            "title": "Params",
                        },
                        "session_id": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Session Id",
                        },
                    },
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["question"],
                    "title": "ChatRequest",
                    "description": "Body of ``POST /api/chat`` and ``POST /api/chat/stream``.",
                },
                "ChatRun": {
                    "properties": {
                        "run_id": {"type": "string", "title": "Run Id"},
                        "state": {
                            "type": "string",
                            "enum": [
                                "queued",
                                "running",
                                "waiting_input",
                                "completed",
                                "failed",
                                "cancelled",
                            ],
                            "title": "State",
                        },
                        "question": {"type": "string", "title": "Question"},
                        "profile": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Profile",
                        },
                        "user": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "User"},
                        "created_at": {"type": "string", "title": "Created At"},
                        "updated_at": {"type": "string", "title": "Updated At"},
                        "answer": {
                            "anyOf": [{"$ref": "#/components/schemas/ChatAnswer"}, {"type": "null"}]
                        },
                        "pending": {
                            "anyOf": [
                                {"$ref": "#/components/schemas/PendingConfirmation"},
                                {"type": "null"},
                            ]
                        },
                        "error": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Error",
                        },
                        "last_seq": {"type": "integer", "title": "Last Seq", "default": 0},
                    },
                    "type": "object",
                    "required": ["run_id", "state", "question", "created_at", "updated_at"],
                    "title": "ChatRun",
                    "description": "A run: ``POST /api/chat``'s response, ``GET /api/runs/{id}``.",
                },
                "Claim": {
                    "properties": {
                        "span": {
                            "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                            "type": "array",
                            "maxItems": 2,
                            "minItems": 2,
                            "title": "Span",
                        },
                        "source_id": {"type": "string", "title": "Source Id"},
                        "result": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Result",
                        },
                        "pointer": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Pointer",
                        },
                        "op": {
                            "anyOf": [
                                {
                                    "type": "string",
                                    "enum": [
                                        "sum",
                                        "product",
                                        "difference",
                                        "quotient",
                                        "percent_of",
                                        "abs",
                                        "count",
                                    ],
                                },
                                {"type": "null"},
                            ],
                            "title": "Op",
                        },
                        "inputs": {
                            "items": {
                                "anyOf": [
                                    {"type": "string"},
                                    {"type": "number"},
                                    {"$ref": "#/components/schemas/Formula"},
                                ]
                            },
                            "type": "array",
                            "title": "Inputs",
                            "default": [],
                        },
                        "decimals": {
                            "anyOf": [{"type": "integer"}, {"type": "null"}],
                            "title": "Decimals",
                        },
                        "kind": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Kind"},
                    },
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["span", "source_id"],
                    "title": "Claim",
                    "description": """\
One figure or fact of an answer and where it comes from (the chat API's ``answer.claims``).

Semantics: the value at ``pointer`` (or ``op`` over ``inputs``) in the result must
be what ``span`` states. A number at the precision it is written with; a string
value (a side, a status, a symbol, an account id) said as itself or by one of its
display names; with ``kind="date"``, an ISO date equal to the value's date; with
``kind="sign"``, a direction word ("up", "gained", "down", "lost") whose sign is
the number's; with ``kind="quote"``, words that stand in the text at the pointer
(spacing aside; a trailing "…" marks where the quotation was cut).\
""",
                },
                "ClarifyingQuestion": {
                    "properties": {
                        "question": {"type": "string", "title": "Question"},
                        "type": {
                            "type": "string",
                            "enum": ["radio", "checkbox", "text"],
                            "title": "Type",
                        },
                        "options": {
                            "items": {"type": "string"},
                            "type": "array",
                            "title": "Options",
                        },
                        "parameter": {"type": "string", "title": "Parameter"},
                    },
                    "type": "object",
                    "required": ["question", "type", "parameter"],
                    "title": "ClarifyingQuestion",
                    "description": """\
What to ask the user when a question is unclear (seed 003 interview payload).

The answer fills ``parameter``: send the question again with
``params = {parameter: <chosen option(s) or text>}``.\
""",
                },
                "ConfirmRequest": {
                    "properties": {
                        "approve": {"type": "boolean", "title": "Approve"},
                        "message": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Message",
                        },
                        "arguments": {
                            "anyOf": [
                                {"additionalProperties": True, "type": "object"},
                                {"type": "null"},
                            ],
                            "title": "Arguments",
                        },
                    },
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["approve"],
                    "title": "ConfirmRequest",
                    "description": "Body of ``POST /api/runs/{id}/confirm``.",
                },
                "Finding": {
                    "properties": {
                        "kind": {
                            "type": "string",
                            "enum": [
                                "unknown_citation",
                                "untraced_number",
                                "untraced_date",
                                "untraced_quote",
                                "off_question",
                                "claim_mismatch",
                                "unbound_figure",
                                "unverifiable_number",
                                "ambiguous_figure",
                                "example_data",
                                "no_answer",
                            ],
                            "title": "Kind",
                        },
                        "text": {"type": "string", "title": "Text"},
                        "message": {"type": "string", "title": "Message"},
                    },
                    "type": "object",
                    "required": ["kind", "text", "message"],
                    "title": "Finding",
                    "description": "One thing the validator could not back with data.",
                },
                "Formula": {
                    "properties": {
                        "op": {
                            "type": "string",
                            "enum": [
                                "sum",
                                "product",
                                "difference",
                                "quotient",
                                "percent_of",
                                "abs",
                                "count",
                            ],
                            "title": "Op",
                        },
                        "inputs": {
                            "items": {
                                "anyOf": [
                                    {"type": "string"},
                                    {"type": "number"},
                                    {"$ref": "#/components/schemas/Formula"},
                                ]
                            },
                            "type": "array",
                            "title": "Inputs",
                        },
                        "decimals": {
                            "anyOf": [{"type": "integer"}, {"type": "null"}],
                            "title": "Decimals",
                        },
                    },
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["op", "inputs"],
                    "title": "Formula",
                    "description": """\
A derived value: ``op`` over ``inputs``, rounded as the writer rounded it.

An input is a JSON pointer into the claim's own result (``/quotes/0/price``), a
pointer into the last successful result of another source, written as a URI
fragment after its source id (``tool:quotes:v1#/quotes/0/price``, RFC 6901 §6),
a nested formula (P/L is ``difference(product(q, price), product(q, cost))``), or a
number the question gave ("10 shares": ``product(10, price)``; the grounding check
holds it to the question's numbers).\
""",
                },
                "Grounding": {
                    "properties": {
                        "verdict": {
                            "type": "string",
                            "enum": ["grounded", "quoted", "repaired", "ungrounded"],
                            "title": "Verdict",
                        },
                        "findings": {
                            "items": {"$ref": "#/components/schemas/Finding"},
                            "type": "array",
                            "title": "Findings",
                        },
                        "numbers_checked": {
                            "type": "integer",
                            "title": "Numbers Checked",
                            "default": 0,
                        },
                        "citations_checked": {
                            "type": "integer",
                            "title": "Citations Checked",
                            "default": 0,
                        },
                    },
                    "type": "object",
                    "required": ["verdict"],
                    "title": "Grounding",
                    "description": "The validator's verdict on an answer, as returned in the response and the trace.",
                },
                "HTTPValidationError": {
                    "properties": {
                        "detail": {
                            "items": {"$ref": "#/components/schemas/ValidationError"},
                            "type": "array",
                            "title": "Detail",
                        }
                    },
                    "type": "object",
                    "title": "HTTPValidationError",
                },
                "PendingConfirmation": {
                    "properties": {
                        "approval_id": {"type": "string", "title": "Approval Id"},
                        "tool": {"type": "string", "title": "Tool"},
                        "arguments": {
                            "additionalProperties": True,
                            "type": "object",
                            "title": "Arguments",
                        },
                        "arguments_hash": {"type": "string", "title": "Arguments Hash"},
                        "description": {"type": "string", "title": "Description"},
                        "expires_at": {"type": "number", "title": "Expires At"},
                    },
                    "type": "object",
                    "required": [
                        "approval_id",
                        "tool",
                        "arguments",
                        "arguments_hash",
                        "description",
                        "expires_at",
                    ],
                    "title": "PendingConfirmation",
                    "description": "The tool call a ``waiting_input`` run waits on.",
                },
                "Problem": {
                    "properties": {"detail": {"type": "string", "title": "Detail"}},
                    "type": "object",
                    "required": ["detail"],
                    "title": "Problem",
                    "description": "The body of an HTTP error that is not a tool's (an unknown id, a malformed body).",
                },
                "ToolCallRecord": {
                    "properties": {
                        "id": {"type": "string", "title": "Id"},
                        "name": {"type": "string", "title": "Name"},
                        "arguments": {"title": "Arguments"},
                        "status": {
                            "type": "string",
                            "enum": ["success", "error"],
                            "title": "Status",
                        },
                        "source_id": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Source Id",
                        },
                        "as_of": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "As Of",
                        },
                        "error_type": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Error Type",
                        },
                        "error_message": {
                            "anyOf": [{"type": "string"}, {"type": "null"}],
                            "title": "Error Message",
                        },
                        "duration_ms": {"type": "number", "title": "Duration Ms"},
                    },
                    "type": "object",
                    "required": ["id", "name", "arguments", "status", "duration_ms"],
                    "title": "ToolCallRecord",
                    "description": "One tool call a run made.",
                },
                "ValidationError": {
                    "properties": {
                        "loc": {
                            "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                            "type": "array",
                            "title": "Location",
                        },
                        "msg": {"type": "string", "title": "Message"},
                        "type": {"type": "string", "title": "Error Type"},
                        "input": {"title": "Input"},
                        "ctx": {"type": "object", "title": "Context"},
                    },
                    "type": "object",
                    "required": ["loc", "msg", "type"],
                    "title": "ValidationError",
                },
            },
        }
    )
