/**
 * OpenTelemetry spans of the engine: one per gate call (`relevance-gate.gate`) and one per tier
 * call the router makes (`relevance-gate.tier`), nested under the caller's active span. They exist
 * only when the application has `@opentelemetry/api` installed (an optional peer, looked up once at
 * first use): without it every function here costs one null check, and with it but no SDK
 * registered the API's own non-recording spans apply. No OpenTelemetry type leaves this module,
 * so the package's public types never need it.
 */
import { createRequire } from 'node:module';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';

type OtelApi = typeof import('@opentelemetry/api');

const TRACER_NAME = 'relevance-gate';

/** Span attributes this engine sets: flat values only. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** A started span: attributes, an error, the end; `run` makes it the parent of spans started inside. */
export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  fail(error: unknown): void;
  end(): void;
  run<T>(fn: () => Promise<T>): Promise<T>;
}

let api: OtelApi | null | undefined;
let tracer: Tracer | undefined;

function load(): OtelApi | null {
  if (api !== undefined) return api;
  try {
    api = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
    tracer = api.trace.getTracer(TRACER_NAME);
  } catch {
    // Not installed (or not loadable): tracing stays off for the life of the process.
    api = null;
  }
  return api;
}

/**
 * Looks the API up now rather than inside the first traced call: requiring `@opentelemetry/api`
 * takes ~25 ms, which would otherwise come out of the first request's budget. True when tracing is on.
 */
export function loadTracing(): boolean {
  return load() !== null;
}

class OtelSpan implements SpanHandle {
  constructor(
    private readonly otel: OtelApi,
    private readonly span: Span,
  ) {}

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes as Attributes);
  }

  fail(error: unknown): void {
    if (error instanceof Error) this.span.recordException(error);
    this.span.setStatus({
      code: this.otel.SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }

  end(): void {
    this.span.end();
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.otel.context.with(this.otel.trace.setSpan(this.otel.context.active(), this.span), fn);
  }
}

/** A span under the active one, or undefined when OpenTelemetry's API is not installed. */
export function startSpan(name: string, attributes: SpanAttributes): SpanHandle | undefined {
  const otel = load();
  if (otel === null || tracer === undefined) return undefined;
  return new OtelSpan(otel, tracer.startSpan(name, { attributes: attributes as Attributes }));
}

/**
 * Runs `fn` inside a span named `name` (its parent for the spans `fn` starts), ending it with
 * `done(result)`'s attributes or the error. Without OpenTelemetry it is just `fn()` (a synchronous
 * throw becomes the rejection) and `attributes` is never called: nothing is built on the hot path.
 */
export function traced<T>(
  name: string,
  attributes: () => SpanAttributes,
  fn: () => T | Promise<T>,
  done?: (result: T) => SpanAttributes,
): Promise<T> {
  const span = load() === null ? undefined : startSpan(name, attributes());
  if (span === undefined) {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return span
    .run(async () => fn())
    .then(
      (result) => {
        if (done !== undefined) span.setAttributes(done(result));
        span.end();
        return result;
      },
      (error: unknown) => {
        span.fail(error);
        span.end();
        throw error;
      },
    );
}
