"""A minimal OTLP/HTTP trace receiver on 127.0.0.1 for tests: decodes protobuf export requests."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class OTLPReceiver:
    """Collects spans POSTed to ``{url}/v1/traces`` as dicts: name, attributes, ids, resource."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                with receiver.lock:
                    for resource_spans in request.resource_spans:
                        resource = {
                            a.key: _value(a.value) for a in resource_spans.resource.attributes
                        }
                        for scope in resource_spans.scope_spans:
                            for span in scope.spans:
                                receiver.spans.append(
                                    {
                                        "name": span.name,
                                        "attributes": {
                                            a.key: _value(a.value) for a in span.attributes
                                        },
                                        "trace_id": span.trace_id.hex(),
                                        "parent_span_id": span.parent_span_id.hex(),
                                        "resource": resource,
                                    }
                                )
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tool_spans(self, tool: str) -> list[dict[str, Any]]:
        """Spans of calls to ``tool``."""
        with self.lock:
            return [s for s in self.spans if s["attributes"].get("gen_ai.tool.name") == tool]

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
