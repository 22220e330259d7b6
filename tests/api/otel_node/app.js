// A small Node http API instrumented with OpenTelemetry's Node SDK, configured only by the environment that
// docs/opentelemetry.md gives (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_COMPRESSION). STACKLENS_OTLP_ENCODING picks the trace exporter:
// "json" is @opentelemetry/exporter-trace-otlp-http, "protobuf" @opentelemetry/exporter-trace-otlp-proto.
//
// It serves GET /orders/:id (a database call, then an http call to its own GET /inventory/:sku) and
// fails on order 13 (the exception is recorded on the server span, the answer is 500); each request logs
// through the logs API in its span's context. It asks itself for /orders/7 and /orders/13, shuts the SDK down
// (which exports everything), and prints {"ok": <trace id>, "failed": <trace id>} on stdout.
"use strict";

const { NodeSDK } = require("@opentelemetry/sdk-node");
const { HttpInstrumentation } = require("@opentelemetry/instrumentation-http");
const { OTLPLogExporter } = require("@opentelemetry/exporter-logs-otlp-http");
const { BatchLogRecordProcessor } = require("@opentelemetry/sdk-logs");
const { trace, SpanKind, SpanStatusCode } = require("@opentelemetry/api");
const { logs, SeverityNumber } = require("@opentelemetry/api-logs");

const { OTLPTraceExporter } =
  process.env.STACKLENS_OTLP_ENCODING === "protobuf"
    ? require("@opentelemetry/exporter-trace-otlp-proto")
    : require("@opentelemetry/exporter-trace-otlp-http");

const sdk = new NodeSDK({
  traceExporter: new OTLPTraceExporter(),
  logRecordProcessors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })],
  // The requests this script sends itself to drive the app are not part of the app: not traced.
  instrumentations: [
    new HttpInstrumentation({ ignoreOutgoingRequestHook: (req) => String(req.path).startsWith("/orders/") }),
  ],
});
sdk.start();
// Required after the SDK started: the http instrumentation patches the module as it is loaded.
const http = require("node:http");

const tracer = trace.getTracer("orders-api");
const logger = logs.getLogger("orders-api");

function queryOrder(id) {
  // What a database client instrumentation records: a CLIENT span with the db.* attributes.
  return tracer.startActiveSpan(
    "SELECT shop.orders",
    {
      kind: SpanKind.CLIENT,
      attributes: { "db.system": "postgresql", "db.statement": "SELECT * FROM orders WHERE id = $1" },
    },
    (span) =>
      new Promise((resolve) =>
        setTimeout(() => {
          span.end();
          resolve({ id, lines: id === 13 ? undefined : [{ sku: "ab-1", qty: 2 }] });
        }, 5),
      ),
  );
}

function totalOf(order) {
  return order.lines.reduce((sum, line) => sum + line.qty, 0);
}

function getJson(port, path) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
      })
      .on("error", reject);
  });
}

const server = http.createServer(async (req, res) => {
  const span = trace.getActiveSpan();
  const orders = req.url.match(/^\/orders\/(\d+)$/);
  if (req.url.startsWith("/inventory/")) {
    span.setAttribute("http.route", "/inventory/:sku");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ inStock: 3 }));
    return;
  }
  if (!orders) {
    res.writeHead(404);
    res.end();
    return;
  }
  // What a framework's router instrumentation sets on the server span.
  span.setAttribute("http.route", "/orders/:id");
  res.setHeader("x-trace-id", span.spanContext().traceId);
  const id = Number(orders[1]);
  logger.emit({
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
    body: `loading order ${id}`,
    attributes: { "order.id": id },
  });
  const order = await queryOrder(id);
  await getJson(server.address().port, "/inventory/ab-1");
  try {
    const total = totalOf(order);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id, total }));
  } catch (err) {
    span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    logger.emit({
      severityNumber: SeverityNumber.ERROR,
      severityText: "ERROR",
      body: `order ${id} failed: ${err.message}`,
      attributes: { "order.id": id, "exception.type": err.name },
    });
    res.writeHead(500);
    res.end();
  }
});

server.listen(0, "127.0.0.1", async () => {
  const port = server.address().port;
  const ok = await getJson(port, "/orders/7");
  const failed = await getJson(port, "/orders/13");
  server.close();
  await sdk.shutdown();
  console.log(
    JSON.stringify({
      ok: ok.headers["x-trace-id"],
      failed: failed.headers["x-trace-id"],
      statuses: [ok.status, failed.status],
    }),
  );
});
